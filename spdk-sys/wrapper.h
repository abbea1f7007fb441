/* The SPDK headers nvmebench binds. Bindgen reads this file at build time against the headers of the
 * installed SPDK; nothing generated from it is committed. */
#include <spdk/stdinc.h>
#include <spdk/env.h>
#include <spdk/log.h>
#include <spdk/nvme.h>
#include <spdk/nvme_spec.h>
#include <spdk/version.h>
