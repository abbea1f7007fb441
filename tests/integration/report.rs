//! `nvmebench report` and `nvmebench merge` on results the real binary makes in the test: the HTML
//! page is well-formed, self-contained and carries every expected series; headless Chromium renders
//! it without console errors; CSV and Markdown agree with the runs; merging concurrent processes
//! started together adds up; bad inputs get one sentence and exit status 2.

use crate::common::{nvmebench, read_result, scratch_dir, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// Runs the null engine and returns its JSON result, written to `dir/name.json`.
pub fn null_run(dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, Value) {
    let path = dir.join(format!("{name}.json"));
    let mut args = vec!["run", "--quiet", "--interval", "100ms", "--json", path.to_str().unwrap()];
    if !extra.contains(&"--engine") {
        args.extend(["--engine", "null"]);
    }
    args.extend_from_slice(extra);
    let o = nvmebench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = read_result(&path);
    (path, v)
}

/// The suite shapes `report` renders (see `report::load`), as a suite would write them, around a
/// real run labelled "step".
fn suite_doc(run: &Value) -> Value {
    let mut step = run.clone();
    step["label"] = json!("step qd=8");
    json!({
        "schema_version": 1,
        "runs": [step],
        "iorate": [{
            "label": "randread 4k",
            "points": [
                { "target_iops": 20000, "iops": 19990, "mean_ns": 80000, "p99_ns": 120000 },
                { "target_iops": 100000, "iops": 99800, "mean_ns": 95000, "p99_ns": 210000 },
                { "target_iops": 180000, "iops": 171000, "mean_ns": 260000, "p99_ns": 2100000 }
            ],
            "stop": { "iops": 171000, "rule": "p99 above 2ms" }
        }],
        "sweeps": [{
            "label": "tq sweep",
            "threads": [1, 2],
            "queue_depths": [1, 8, 32],
            "iops": [[11000, 80000, 200000], [21000, 150000, 390000]],
            "p99_ns": [[90000, 110000, 150000], [92000, 115000, 170000]]
        }],
        "steady_state": [{
            "label": "precondition",
            "rounds": [210000, 150000, 120000, 98000, 91000, 90500, 89000, 90200, 89800, 90100]
        }]
    })
}

/// Results made by the tool itself: a random-read run, a mixed run, and a suite file.
fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let (a, _) = null_run(dir, "alpha", &["--time", "700ms"]);
    let (b, bv) =
        null_run(dir, "beta", &["--time", "700ms", "--rw", "randrw", "--qd", "8", "--engine", "null:lat=5us"]);
    let suite = dir.join("suite.json");
    std::fs::write(&suite, suite_doc(&bv).to_string()).unwrap();
    vec![a, b, suite]
}

/// The text of every node under the element with `id`.
fn texts_under(doc: &roxmltree::Document, id: &str) -> String {
    let node = doc.descendants().find(|n| n.attribute("id") == Some(id)).unwrap_or_else(|| panic!("no #{id}"));
    node.descendants().filter_map(|n| n.text()).collect::<Vec<_>>().join("|")
}

#[test]
fn html_report_is_well_formed_self_contained_and_has_every_series() {
    let dir = scratch_dir();
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(fixtures(dir.path()).iter().map(|p| p.display().to_string()));
    let out = dir.path().join("report.html");
    args.extend(["-o".into(), out.display().to_string()]);
    let o = nvmebench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();

    for banned in ["http://", "https://", "<script", "<link", "src=", "url(", "@import"] {
        assert!(!html.contains(banned), "the page must not load anything ({banned} found)");
    }
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() },
    )
    .unwrap_or_else(|e| panic!("the page is not well-formed: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "html");

    // Summary: alpha read; beta read and write; the suite's step read and write.
    let summary = doc.descendants().find(|n| n.attribute("id") == Some("summary-table")).unwrap();
    let rows = summary.children().filter(|n| n.has_tag_name("tr")).count();
    assert_eq!(rows, 1 + 5);
    let s = texts_under(&doc, "summary-table");
    for label in ["alpha", "beta", "step qd=8"] {
        assert!(s.contains(label), "{label} in the summary: {s}");
    }

    let overlay = ["alpha read", "beta read", "beta write", "step qd=8 read", "step qd=8 write"];
    for fig in ["percentiles", "histogram", "iops-time", "mbps-time", "p99-time"] {
        let t = texts_under(&doc, fig);
        for series in overlay {
            assert!(t.contains(series), "series {series} in #{fig}: {t}");
        }
        let svg = doc.descendants().find(|n| n.attribute("id") == Some(fig)).unwrap();
        let lines = svg.descendants().filter(|n| n.has_tag_name("polyline")).count();
        assert!(lines >= overlay.len(), "#{fig} draws a line per series ({lines} polylines)");
    }
    let nines = texts_under(&doc, "percentiles");
    for tick in ["90%", "99%", "99.9%", "99.99%"] {
        assert!(nines.contains(tick), "nines axis tick {tick}: {nines}");
    }
    let t = texts_under(&doc, "iorate-plot");
    assert!(
        t.contains("randread 4k mean") && t.contains("randread 4k p99") && t.contains("stop: p99 above 2ms"),
        "{t}"
    );
    let t = texts_under(&doc, "sweep-0");
    assert!(t.contains("390k") && t.contains("p99 170µs"), "{t}");
    let t = texts_under(&doc, "steady-0");
    assert!(t.contains("steady from round 6") && t.contains("20% band"), "{t}");
    // Config, machine and device identity of each run.
    for row in ["<td>pattern</td><td>randrw, 50% reads</td>", "<td>queue depth</td><td>8</td>", "<td>kernel</td>"] {
        assert!(html.contains(row), "run details show {row}");
    }
}

/// Chromium, if installed, as a command with the flags for a headless, offline, throwaway profile.
pub fn chromium(profile: &Path) -> Option<Command> {
    let path = std::env::var_os("PATH")?;
    let exe = std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())?;
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .stdin(Stdio::null());
    Some(c)
}

/// Console messages and failed loads in Chromium's log: a page without script should have none.
pub fn page_problems(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("net::ERR_") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn chromium_renders_the_report_without_console_errors() {
    let dir = scratch_dir();
    if chromium(dir.path()).is_none() {
        crate::skip::skip(crate::skip::Need::Chromium, "chromium not installed (apt-get install chromium)");
        return;
    }
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(fixtures(dir.path()).iter().map(|p| p.display().to_string()));
    let page = dir.path().join("report.html");
    args.extend(["-o".into(), page.display().to_string()]);
    let o = nvmebench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let url = format!("file://{}", page.display());

    // The check itself must be able to fail: a page with a script error is caught.
    let bad = dir.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><script>undefinedFn();</script></body></html>").unwrap();
    let o = chromium(&dir.path().join("p0"))
        .unwrap()
        .arg("--dump-dom")
        .arg(format!("file://{}", bad.display()))
        .output()
        .unwrap();
    assert!(!page_problems(&stderr(&o)).is_empty(), "a broken page is noticed: {}", stderr(&o));

    let o = chromium(&dir.path().join("p1")).unwrap().arg("--dump-dom").arg(&url).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let problems = page_problems(&stderr(&o));
    assert!(problems.is_empty(), "console errors: {problems:?}");
    let dom = stdout(&o);
    let charts = [
        "percentiles",
        "histogram",
        "cdf",
        "iops-bars",
        "mbps-bars",
        "mean-bars",
        "p99-bars",
        "p99.99-bars",
        "iops-time",
        "mbps-time",
        "p99-time",
        "iorate-plot",
        "sweep-0",
        "sweep-0-iops",
        "sweep-0-p99",
        "steady-0",
    ];
    assert_eq!(dom.matches("<svg").count(), charts.len(), "every plot is in the rendered DOM");
    for id in charts {
        assert!(dom.contains(&format!("<figure id=\"{id}\">")), "#{id} in the rendered DOM");
    }
    assert!(dom.contains("id=\"percentiles\"") && dom.contains("id=\"steady-0\""));

    // Kept in cargo's target dir so a person can look at it.
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium(&dir.path().join("p2"))
        .unwrap()
        .args(["--window-size=1100,7000", &format!("--screenshot={}", shot.display()), &url])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let problems = page_problems(&stderr(&o));
    assert!(problems.is_empty(), "console errors: {problems:?}");
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(png_size(&png), (1100, 7000));
    // A blank page of this size compresses to a few kB; eight plots with text do not.
    assert!(png.len() > 150_000, "the screenshot looks empty ({} bytes)", png.len());
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn one_chart_as_svg_and_png_and_a_page_to_publish() {
    let dir = scratch_dir();
    let (a, av) = null_run(dir.path(), "alpha", &["--ios", "50000"]);
    let (b, _) = null_run(dir.path(), "beta", &["--ios", "40000", "--rw", "randrw"]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let svg = dir.path().join("p99.svg");
    let o = nvmebench(&[
        "report",
        a,
        b,
        "--chart",
        "p99-bars",
        "--label",
        &format!("{a}=Drive A"),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("a standalone SVG: {e}"));
    assert_eq!(doc.root_element().tag_name().namespace(), Some("http://www.w3.org/2000/svg"));
    assert!(text.contains("p99 latency by run") && text.contains("Drive A") && text.contains("beta"), "{text}");

    let png = dir.path().join("cdf.png");
    let o = nvmebench(&["report", a, "--format", "png", "--chart", "cdf", "-o", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(png_size(&bytes), (1920, 2 * 480 + 2 * 42), "twice the SVG's size, one legend row");

    // As a device run records it: the drive's identity in the config.
    let mut device = av.clone();
    device["config"]["target"] = json!({ "path": "/dev/nvme0n1", "kind": "block_device", "size_bytes": 1u64 << 30, "logical_block_bytes": 4096, "device": "259:0", "nvme_sibling": null, "model": "Acme NVMe", "serial": "S3EVNX0K123456" });
    let dev = dir.path().join("device.json");
    std::fs::write(&dev, device.to_string()).unwrap();
    let page = dir.path().join("p.html");
    let render = |extra: &[&str]| {
        let mut args =
            vec!["report", dev.to_str().unwrap(), b, "--title", "Drive A <against> B", "-o", page.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = nvmebench(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(&page).unwrap()
    };
    assert!(render(&[]).contains("S3EVNX0K123456"), "the serial is shown unless asked not to");
    let html = render(&["--hide-serial", "--label", &format!("{b}=Drive B")]);
    assert!(!html.contains("S3EVNX0K123456"), "the serial number is nowhere on the page");
    assert!(html.contains("<td>model</td><td>Acme NVMe</td>"), "the rest of the identity stays");
    assert!(
        html.contains("<title>Drive A &lt;against&gt; B</title>")
            && html.contains("<h1>Drive A &lt;against&gt; B</h1>")
    );
    assert!(html.contains("<td class=\"l\">Drive B</td>"), "labelled");
}

#[test]
fn csv_and_markdown_agree_with_the_runs() {
    let dir = scratch_dir();
    let (a, av) = null_run(dir.path(), "alpha", &["--ios", "50000"]);
    let (b, _) = null_run(dir.path(), "beta", &["--ios", "40000", "--rw", "randrw"]);
    let o = nvmebench(&["report", "--format", "csv", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = stdout(&o);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "run,direction,ios,iops,mb_per_s,mean_us,p99_us,p99_99_us,max_us,stddev_us,errors");
    assert_eq!(lines.len(), 4, "{csv}");
    let f: Vec<&str> = lines[1].split(',').collect();
    assert_eq!((f[0], f[1], f[2]), ("alpha", "read", "50000"));
    let read = &av["results"]["total"]["read"];
    let iops: f64 = f[3].parse().unwrap();
    assert!((iops - read["iops"].as_f64().unwrap()).abs() < 0.1, "{iops} vs {}", read["iops"]);
    let p99_us: f64 = f[6].parse().unwrap();
    assert_eq!((p99_us * 1000.0).round() as u64, read["lat_ns"]["percentiles"]["99.0"].as_u64().unwrap());
    let beta_ios: u64 = lines[2..].iter().map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(beta_ios, 40_000);

    // A directory of results, Markdown chosen by the file name.
    let md_path = dir.path().join("summary.md");
    let o = nvmebench(&["report", dir.path().to_str().unwrap(), "-o", md_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md.starts_with("| run | dir | IOPS |"), "{md}");
    assert_eq!(md.lines().count(), 2 + 3);
    assert!(md.contains("| alpha | read |") && md.contains("| beta | write |"));
}

/// An `-o` name whose extension says one format while `--format` (or the command) writes another is
/// refused before anything is written; a name that says nothing (`.txt`) takes any format, and
/// without `--format` the extension decides.
#[test]
fn output_names_that_contradict_the_format_are_refused() {
    let dir = scratch_dir();
    let (good, _) = null_run(dir.path(), "good", &["--ios", "1000"]);
    let g = good.to_str().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, String, String)> = vec![
        (
            vec!["report".into(), g.into(), "--format".into(), "csv".into(), "-o".into(), at("r.html")],
            at("r.html"),
            format!(
                "-o {}: the extension says HTML, but --format csv writes CSV; name it {}, or drop --format to write HTML",
                at("r.html"),
                at("r.csv")
            ),
        ),
        (
            vec!["report", g, "--format", "png", "--chart", "cdf", "-o"]
                .into_iter()
                .map(String::from)
                .chain([at("c.SVG")])
                .collect(),
            at("c.SVG"),
            format!("the extension says SVG, but --format png writes PNG; name it {}, or drop", at("c.png")),
        ),
        (
            vec!["report".into(), g.into(), "--format".into(), "html".into(), "-o".into(), at("r.json")],
            at("r.json"),
            format!(
                "-o {}: the extension says JSON, but --format html writes HTML; name it {}",
                at("r.json"),
                at("r.html")
            ),
        ),
        (
            vec!["merge".into(), g.into(), "-o".into(), at("t.md")],
            at("t.md"),
            format!(
                "-o {}: the extension says Markdown, but merge writes JSON; name it {}, and render that with `nvmebench report {} -o {}`",
                at("t.md"),
                at("t.json"),
                at("t.json"),
                at("t.md")
            ),
        ),
    ];
    for (args, out, words) in &cases {
        let o = nvmebench(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(words.as_str()), "{args:?}: expected '{words}' in: {e}");
        assert!(!e.contains("drop --format") || !out.ends_with(".json"), "report writes no JSON: {e}");
        assert!(!Path::new(out).exists(), "{out} written after: {e}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["good.json"], "nothing but the input in the directory");

    // A name that says no format takes the one asked for; without --format, the extension decides.
    let o = nvmebench(&["report", g, "--format", "csv", "-o", &at("summary.txt")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(at("summary.txt")).unwrap().starts_with("run,direction,ios,"));
    let o = nvmebench(&["report", g, "-o", &at("summary.CSV")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(at("summary.CSV")).unwrap().starts_with("run,direction,ios,"));
    let o = nvmebench(&["report", g, "--format", "md", "-o", &at("summary.markdown")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Seconds since the epoch, as `--start-at` takes them.
fn unix_now() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64()
}

#[test]
fn processes_started_together_merge_into_one_result() {
    let dir = scratch_dir();
    let start_at = unix_now() + 3.0;
    let start = format!("{start_at:.3}");
    let ios = [30_000u64, 20_000, 25_000];
    let children: Vec<_> = ios
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let path = dir.path().join(format!("host{i}.json"));
            let child = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
                // Paced to last a second or so, so that start jitter is small beside the runs (the
                // merge warns about inputs that did not run together).
                .args(["run", "--engine", "null", "--quiet", "--rw", "randrw", "--ios", &n.to_string()])
                .args(["--rate-iops", "20000"])
                .args(["--start-at", &start, "--json", path.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (path, child)
        })
        .collect();
    let mut paths = Vec::new();
    for (path, child) in children {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = read_result(&path);
        let started = v["results"]["started_at_unix_ns"].as_u64().unwrap() as f64 / 1e9;
        assert!(started >= start_at - 0.001, "started {started} before --start-at {start_at}");
        assert!(started - start_at < 0.5, "started {:.3} s after --start-at", started - start_at);
        assert!((v["config"]["start_at_unix_s"].as_f64().unwrap() - start_at).abs() < 0.001);
        paths.push(path);
    }
    let total = dir.path().join("total.json");
    let mut args = vec!["merge"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", total.to_str().unwrap()]);
    let o = nvmebench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "runs started together overlap: {}", stderr(&o));
    let m = read_result(&total);
    assert_eq!(m["merged"]["notes"], json!([]));
    let page = dir.path().join("fleet.html");
    let o = nvmebench(&["report", total.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<figure id=\"inputs\">") && html.contains("IOPS by input"), "a bar per merged input");
    assert!(html.contains("<figure id=\"workers\">"), "a bar per worker of every input");
    assert!(html.contains("3 across 3 merged runs"), "the run's facts count every input's workers");
    let t = &m["results"]["total"];
    let merged_ios = t["read"]["ios"].as_u64().unwrap() + t["write"]["ios"].as_u64().unwrap();
    assert_eq!(merged_ios, ios.iter().sum::<u64>(), "the merged I/O count is the sum");
    for d in ["read", "write"] {
        let h = nvmebench::report::json::decode_histogram(t[d]["hist"].as_str().unwrap()).unwrap();
        assert_eq!(h.len(), t[d]["ios"].as_u64().unwrap());
    }
    let inputs: Vec<Value> = paths.iter().map(|p| read_result(p)).collect();
    let longest = inputs.iter().map(|v| v["results"]["elapsed_ns"].as_u64().unwrap()).max().unwrap();
    assert_eq!(m["results"]["elapsed_ns"].as_u64().unwrap(), longest);
    assert_eq!(m["results"]["workers"].as_array().unwrap().len(), 3);
    assert_eq!(m["merged"]["inputs"].as_array().unwrap().len(), 3);
    let max_in: u64 =
        inputs.iter().map(|v| v["results"]["total"]["read"]["lat_ns"]["max"].as_u64().unwrap()).max().unwrap();
    assert_eq!(t["read"]["lat_ns"]["max"].as_u64().unwrap(), max_in);

    // The merged result is itself a result: it renders and merges again.
    let o = nvmebench(&["report", "--format", "md", total.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let read_ios = t["read"]["ios"].as_u64().unwrap();
    assert!(stdout(&o).contains(&format!(" | {read_ios} | 0 |")), "{}", stdout(&o));

    // A run that reaches a merge twice would count its I/Os twice: the same file, a copy of it,
    // or a merge beside one of its own inputs. Each is refused, and nothing is written.
    let copy = dir.path().join("copy.json");
    std::fs::copy(&paths[0], &copy).unwrap();
    let again = dir.path().join("again.json");
    let p0 = paths[0].to_str().unwrap();
    for (inputs, want) in [
        ([p0, p0], "the file is given twice"),
        ([p0, copy.to_str().unwrap()], "copy.json hold the same run (host, start, duration and I/O count match"),
        ([total.to_str().unwrap(), paths[1].to_str().unwrap()], "total.json and "),
    ] {
        let o = nvmebench(&["merge", inputs[0], inputs[1], "-o", again.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{inputs:?}: {e}");
        assert!(e.contains(want) && e.contains("give each run once"), "{inputs:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert!(!again.exists(), "{inputs:?} wrote a merge");
    }
}

/// Each case: how to spoil the input, and words the one-line error must contain.
#[test]
fn bad_inputs_get_one_sentence_and_exit_2_and_write_nothing() {
    let dir = scratch_dir();
    let (good, v) = null_run(dir.path(), "good", &["--ios", "1000"]);
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let mut digits = v.clone();
    digits["histogram"]["significant_digits"] = json!(2);
    let mut newer = v.clone();
    newer["schema_version"] = json!(99);
    let mut short = v.clone();
    short["results"]["total"]["read"]["ios"] = json!(999);
    let mut no_hist = v.clone();
    no_hist["results"]["total"]["read"].as_object_mut().unwrap().remove("hist");
    let mut sweep = json!({ "sweeps": [{ "threads": [1, 2], "queue_depths": [1], "iops": [[1.0]] }] });
    sweep["schema_version"] = json!(1);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cases: Vec<(PathBuf, &[&str])> = vec![
        (dir.path().join("missing.json"), &["cannot read", "missing.json", "check the path"]),
        (write("text.json", "not json".into()), &["is not JSON"]),
        (write("other.json", "{\"a\": 1}".into()), &["is not an nvmebench result"]),
        (
            write("digits.json", digits.to_string()),
            &["histograms are 1..3600000000000 ns at 2 significant digits", "not nvmebench's"],
        ),
        (write("newer.json", newer.to_string()), &["schema_version 99 is newer", "upgrade nvmebench"]),
        (write("short.json", short.to_string()), &["results.total.read.hist: holds 1000 I/Os but ios says 999"]),
        (write("nohist.json", no_hist.to_string()), &["results.total.read.hist: is missing"]),
        (write("sweep.json", sweep.to_string()), &["sweeps[0].iops: must have 2 rows (threads) of 1 values"]),
        (empty, &["holds no .json files"]),
    ];
    for (bad, words) in &cases {
        for (cmd, out) in [("report", "out.html"), ("merge", "out.json")] {
            let out = dir.path().join(out);
            let o = nvmebench(&[cmd, good.to_str().unwrap(), bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {}: {e}", bad.display());
            assert_eq!(e.lines().count(), 1, "one line: {e}");
            assert!(e.starts_with("nvmebench: "), "{e}");
            for w in *words {
                assert!(e.contains(w), "{cmd} {}: expected '{w}' in: {e}", bad.display());
            }
            assert!(!out.exists(), "nothing written after: {e}");
        }
    }
    let g = good.to_str().unwrap();
    let usage: Vec<(Vec<&str>, &str)> = vec![
        (vec!["report", g, "-o", "/nonexistent-dir/r.html"], "the directory /nonexistent-dir does not exist"),
        (vec!["report", g, "-o", "r.pdf"], "cannot tell the format from the extension 'pdf'"),
        (vec!["report", g, "-o", "r.json"], "report renders HTML, CSV, Markdown, SVG or PNG, not JSON; to combine"),
        (vec!["merge", g, "-o", g], "is one of the inputs"),
        (vec!["report", "--format", "csv", "--", "-"], "cannot read -"),
        (
            vec!["report", g, "--label", "missing.json=X"],
            "--label missing.json=X: missing.json holds no run among the inputs",
        ),
        (vec!["report", g, "--label", "nonsense"], "--label nonsense: write FILE=NAME"),
        (
            vec!["report", g, "--format", "png"],
            "--format png writes one chart; name it with --chart (one of: percentiles, histogram, cdf",
        ),
        (
            vec!["report", g, "--chart", "nope", "-o", "x.svg"],
            "--chart nope: no such chart in these results; pick one of: percentiles,",
        ),
        (vec!["report", g, "--chart", "cdf"], "--chart picks a chart for --format svg or png"),
        (vec!["report", g, "-o", "/proc/r.html"], "cannot write /proc/r.html"),
        (vec!["man", "bench"], "man bench: no such command"),
    ];
    for (args, words) in usage {
        let o = nvmebench(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(words), "{args:?}: expected '{words}' in: {e}");
    }
    let o = nvmebench(&["run", "--engine", "null", "--start-at", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--start-at: 1000 was "), "{}", stderr(&o));
    // The good file was not touched by the refused merge onto itself.
    assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&good).unwrap()).unwrap(), v);
}

#[test]
fn runs_with_trims_and_flushes_report_a_row_per_operation_and_merge() {
    let dir = scratch_dir();
    let mix = ["--rw", "randrw", "--rwmix", "read=60,trim=30,flush=10", "--ios", "20000"];
    let (a, av) = null_run(dir.path(), "ops-a", &mix);
    let (b, bv) = null_run(dir.path(), "ops-b", &mix);
    let o = nvmebench(&["report", "--format", "csv", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = stdout(&o);
    let rows: Vec<(String, u64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[2].parse().unwrap())
        })
        .collect();
    let want: Vec<(String, u64)> = ["read", "trim", "flush"]
        .iter()
        .map(|d| (d.to_string(), av["results"]["total"][d]["ios"].as_u64().unwrap()))
        .collect();
    assert_eq!(rows, want, "{csv}");

    let page = dir.path().join("ops.html");
    let o = nvmebench(&["report", a.to_str().unwrap(), b.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("randrw, read 60%, trim 30%, flush 10%"), "the pattern names every share");
    assert!(html.contains("ops-a trim") && html.contains("ops-b flush"), "a series per run and operation");

    let merged = dir.path().join("merged.json");
    let o = nvmebench(&["merge", a.to_str().unwrap(), b.to_str().unwrap(), "-o", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = read_result(&merged);
    for d in ["trim", "flush"] {
        let sum =
            av["results"]["total"][d]["ios"].as_u64().unwrap() + bv["results"]["total"][d]["ios"].as_u64().unwrap();
        assert_eq!(m["results"]["total"][d]["ios"], sum, "{d}");
    }
    assert!(m["intervals"][0]["trim"]["ios"].is_u64(), "{}", m["intervals"][0]);
}
