/* Real symbols for what nvmebench needs from SPDK that bindgen cannot bind: static inline helpers,
 * macros, and fields of packed NVMe spec structures. Compiled against the installed SPDK's headers
 * at build time. */
/* ppoll, for the wait's timeout finer than a millisecond. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <spdk/stdinc.h>
#include <spdk/env.h>
#include <spdk/nvme.h>
#include <spdk/version.h>
#if SPDK_VERSION >= SPDK_VERSION_NUM(25, 5, 0)
#include <spdk/fd_group.h>
#endif

/* SPDK's version as the headers nvmebench was built against say it. */
const char *nvmebench_shim_version(void)
{
	return SPDK_VERSION_STRING;
}

/* The completion's status field as the spec lays it out: bit 0 phase, 1-8 SC, 9-11 SCT, 15 DNR. */
uint16_t nvmebench_shim_cpl_status(const struct spdk_nvme_cpl *cpl)
{
	return cpl->status_raw;
}

/* Model, serial and firmware revision of a controller, each copied NUL-terminated. */
void nvmebench_shim_ctrlr_ids(struct spdk_nvme_ctrlr *ctrlr, char mn[41], char sn[21], char fr[9])
{
	const struct spdk_nvme_ctrlr_data *cdata = spdk_nvme_ctrlr_get_data(ctrlr);

	memcpy(mn, cdata->mn, 40);
	mn[40] = '\0';
	memcpy(sn, cdata->sn, 20);
	sn[20] = '\0';
	memcpy(fr, cdata->fr, 8);
	fr[8] = '\0';
}

/* The controller's NUMA node, or -1 if unknown. SPDK 24.09 renamed socket to NUMA id. */
int32_t nvmebench_shim_ctrlr_numa_id(struct spdk_nvme_ctrlr *ctrlr)
{
#if SPDK_VERSION >= SPDK_VERSION_NUM(24, 9, 0)
	return spdk_nvme_ctrlr_get_numa_id(ctrlr);
#else
	return spdk_nvme_ctrlr_get_socket_id(ctrlr);
#endif
}

/* Initialises the environment. Kept in C because spdk_env_opts grew an opts_size field (that must
 * be set before spdk_env_opts_init) in SPDK 24.09; older releases have no such field. Pointers may
 * be NULL for "default"; mem_size_mb < 0 keeps SPDK's default. single_file_segments puts each
 * memory segment list in one hugepage file (DPDK --single-file-segments); env_context holds extra
 * DPDK EAL arguments. Returns spdk_env_init's result. */
int nvmebench_shim_env_init(const char *name, const char *core_mask, int main_core, int shm_id,
			    int mem_size_mb, bool no_huge, bool no_pci, const char *iova_mode,
			    bool single_file_segments, const char *env_context)
{
	struct spdk_env_opts opts;

	memset(&opts, 0, sizeof(opts));
#if SPDK_VERSION >= SPDK_VERSION_NUM(24, 9, 0)
	opts.opts_size = sizeof(opts);
#endif
	spdk_env_opts_init(&opts);
	opts.name = name;
	if (core_mask != NULL) {
		opts.core_mask = core_mask;
	}
	if (main_core >= 0) {
		opts.main_core = main_core;
	}
	opts.shm_id = shm_id;
	if (mem_size_mb >= 0) {
		opts.mem_size = mem_size_mb;
	}
	opts.no_huge = no_huge;
	opts.no_pci = no_pci;
	if (iova_mode != NULL) {
		opts.iova_mode = iova_mode;
	}
	opts.hugepage_single_segments = single_file_segments;
	if (env_context != NULL) {
		opts.env_context = (void *)env_context;
	}
	return spdk_env_init(&opts);
}

/* The controller's Optional NVM Command Support bits that nvmebench uses: bit 0 Dataset Management
 * (deallocate), bit 1 Write Zeroes. */
uint32_t nvmebench_shim_ctrlr_oncs(struct spdk_nvme_ctrlr *ctrlr)
{
	const struct spdk_nvme_ctrlr_data *cdata = spdk_nvme_ctrlr_get_data(ctrlr);

	return (cdata->oncs.dsm ? 1u : 0u) | (cdata->oncs.write_zeroes ? 2u : 0u);
}

/* Deallocates one range: Dataset Management with the deallocate attribute (the range is copied by
 * SPDK into a request of its own). Returns spdk_nvme_ns_cmd_dataset_management's result. */
int nvmebench_shim_ns_cmd_deallocate(struct spdk_nvme_ns *ns, struct spdk_nvme_qpair *qpair, uint64_t lba,
				     uint32_t lba_count, spdk_nvme_cmd_cb cb_fn, void *cb_arg)
{
	struct spdk_nvme_dsm_range range;

	memset(&range, 0, sizeof(range));
	range.starting_lba = lba;
	range.length = lba_count;
	return spdk_nvme_ns_cmd_dataset_management(ns, qpair, SPDK_NVME_DSM_ATTR_DEALLOCATE, &range, 1, cb_fn,
			cb_arg);
}

/* Sets spdk_nvme_ctrlr_opts.enable_interrupts (SPDK 25.05 on); false where this SPDK has no such
 * option. */
bool nvmebench_shim_ctrlr_opts_enable_interrupts(struct spdk_nvme_ctrlr_opts *opts)
{
#if SPDK_VERSION >= SPDK_VERSION_NUM(25, 5, 0)
	opts->enable_interrupts = true;
	return true;
#else
	(void)opts;
	return false;
#endif
}

/* Whether the controller's interrupts are enabled: SPDK clears the option at attach when it could
 * not enable them. */
bool nvmebench_shim_ctrlr_interrupts(struct spdk_nvme_ctrlr *ctrlr)
{
#if SPDK_VERSION >= SPDK_VERSION_NUM(25, 5, 0)
	return spdk_nvme_ctrlr_get_opts(ctrlr)->enable_interrupts;
#else
	(void)ctrlr;
	return false;
#endif
}

/* Sleeps until one of the poll group's queue pairs signals a completion, or timeout_ns pass (-1:
 * no timeout), and processes the completions of those that did (SPDK's handler,
 * spdk_nvme_qpair_process_completions with no limit of the caller's): spdk_nvme_poll_group_wait
 * with a timeout, which that call lacks. A timeout of whole milliseconds is the fd group's own
 * (one epoll_wait, as perf -E sleeps); a finer one (a paced worker's next I/O due in 80 us) waits
 * for the fd group's epoll descriptor in ppoll, which takes a timespec, and then lets the fd group
 * handle what is ready without sleeping again. The number of events handled, 0 on a timeout, or a
 * negative errno. */
int nvmebench_shim_poll_group_wait(struct spdk_nvme_poll_group *group, int64_t timeout_ns)
{
#if SPDK_VERSION >= SPDK_VERSION_NUM(25, 5, 0)
	struct spdk_fd_group *fgrp = spdk_nvme_poll_group_get_fd_group(group);
	struct pollfd pfd;
	struct timespec ts;
	int rc;

	if (timeout_ns < 0) {
		return spdk_fd_group_wait(fgrp, -1);
	}
	if (timeout_ns % 1000000 == 0 && timeout_ns / 1000000 <= INT_MAX) {
		return spdk_fd_group_wait(fgrp, (int)(timeout_ns / 1000000));
	}
	pfd.fd = spdk_fd_group_get_fd(fgrp);
	pfd.events = POLLIN;
	pfd.revents = 0;
	ts.tv_sec = timeout_ns / 1000000000;
	ts.tv_nsec = timeout_ns % 1000000000;
	rc = ppoll(&pfd, 1, &ts, NULL);
	if (rc < 0) {
		return -errno;
	}
	if (rc == 0) {
		return 0;
	}
	return spdk_fd_group_wait(fgrp, 0);
#else
	(void)group;
	(void)timeout_ns;
	return -ENOTSUP;
#endif
}
