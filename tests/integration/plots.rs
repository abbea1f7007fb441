//! The report's plots as a reader sees them: each kind of page (runs, sweeps with one and several
//! thread counts, an iorate curve, steady state) rendered in headless Chromium, with no console
//! errors, no text outside its plot and no two texts of a plot on top of each other, measured from
//! the DOM's bounding boxes. Screenshots are kept in cargo's target dir for a person to look at.

use crate::common::{nvmebench, scratch_dir, stderr, stdout};
use crate::report::{chromium, null_run, page_problems, png_size};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Measures every plot's texts after layout and writes the problems into `#layout-problems`.
const CHECK: &str = r#"<script>
addEventListener('load', () => {
  const problems = [];
  let texts = 0;
  for (const svg of document.querySelectorAll('figure svg')) {
    const fig = svg.closest('figure').id;
    const box = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')]
      .filter(t => t.textContent.trim() !== '')
      .map(t => ({ text: t.textContent.trim(), r: t.getBoundingClientRect() }));
    texts += boxes.length;
    for (const { text, r } of boxes) {
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        problems.push(`${fig}: "${text}" reaches outside the plot`);
      }
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].r, b = boxes[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) problems.push(`${fig}: "${boxes[i].text}" overlaps "${boxes[j].text}"`);
      }
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'layout-problems';
  pre.dataset.texts = texts;
  pre.textContent = JSON.stringify(problems);
  document.body.appendChild(pre);
});
</script>"#;

/// The problems the check found on `page` (a copy with the check injected), and how many texts it
/// measured.
fn layout_problems(dir: &Path, page: &Path) -> (Vec<String>, usize) {
    let html = std::fs::read_to_string(page).unwrap();
    let checked = page.with_extension("checked.html");
    std::fs::write(&checked, html.replace("</body>", &format!("{CHECK}</body>"))).unwrap();
    let o = chromium(&dir.join("profile-check")).unwrap().arg("--dump-dom").arg(url(&checked)).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dom = stdout(&o);
    let start = dom.find("<pre id=\"layout-problems\"").expect("the check ran");
    let texts: usize =
        dom[start..].split("data-texts=\"").nth(1).and_then(|t| t.split('"').next()).unwrap().parse().unwrap();
    let body = &dom[dom[start..].find('>').unwrap() + start + 1..];
    let json = body[..body.find("</pre>").unwrap()]
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    (serde_json::from_str(&json).unwrap(), texts)
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Renders `inputs` into `name.html`, checks the page in Chromium and keeps its screenshot.
fn look_at(dir: &Path, name: &str, inputs: &[PathBuf], height: u32) -> Vec<String> {
    let page = dir.join(format!("{name}.html"));
    let mut args = vec!["report".to_string()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), page.display().to_string()]);
    let o = nvmebench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("plots-{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let o = chromium(&dir.join(format!("profile-{name}")))
        .unwrap()
        .args([&format!("--window-size=1100,{height}"), &format!("--screenshot={}", shot.display()), &url(&page)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let problems = page_problems(&stderr(&o));
    assert!(problems.is_empty(), "{name}: console errors: {problems:?}");
    assert_eq!(png_size(&std::fs::read(&shot).unwrap()), (1100, height));
    eprintln!("screenshot: {}", shot.display());

    let (problems, texts) = layout_problems(dir, &page);
    assert!(texts >= 10, "{name}: the check measured the plots' texts ({texts})");
    problems
}

fn write(dir: &Path, name: &str, doc: Value) -> PathBuf {
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

fn sweep(label: &str, threads: &[u64], qds: &[u64]) -> Value {
    let iops: Vec<Vec<f64>> = threads
        .iter()
        .map(|t| qds.iter().map(|q| 9_000.0 * (*t * *q) as f64 / (1.0 + 0.02 * (*t * *q) as f64)).collect())
        .collect();
    let p99: Vec<Vec<f64>> =
        threads.iter().map(|t| qds.iter().map(|q| 80_000.0 + 3_000.0 * (*t * *q) as f64).collect()).collect();
    json!({ "schema_version": 1, "sweeps": [{ "label": label, "threads": threads, "queue_depths": qds, "iops": iops, "p99_ns": p99 }] })
}

#[test]
fn every_kind_of_page_renders_cleanly_in_chromium() {
    let dir = scratch_dir();
    if chromium(dir.path()).is_none() {
        crate::skip::skip(crate::skip::Need::Chromium, "chromium not installed (apt-get install chromium)");
        return;
    }
    let d = dir.path();
    let (a, av) = null_run(d, "uring 4k randread", &["--time", "1s"]);
    // A name as long as reviewers write them: legends and bar labels must fit it in.
    let mut long = av.clone();
    long["label"] = json!("Samsung 990 PRO 2TB, firmware 4B2QJXD7, 4k random read at QD32 with 4 jobs");
    let long = write(d, "long", long);
    let (b, _) =
        null_run(d, "aio 4k randrw", &["--time", "1s", "--rw", "randrw", "--jobs", "2", "--engine", "null:lat=5us"]);
    let one = write(d, "one", sweep("4k randread, one thread", &[1], &[1, 2, 4, 8, 16, 32, 64, 128]));
    let several = write(d, "several", sweep("4k randread", &[1, 2, 4, 8, 16], &[1, 2, 4, 8, 16, 32, 64, 128]));
    let points: Vec<Value> = (1..=12)
        .map(|k| {
            let iops = 20_000.0 * k as f64;
            json!({ "target_iops": iops, "iops": iops * 0.99, "mean_ns": 80_000.0 + 2e3 * (k * k) as f64, "p99_ns": 150_000.0 * (1.0 + 0.05 * (k * k) as f64) })
        })
        .collect();
    let iorate = write(
        d,
        "iorate",
        json!({ "schema_version": 1, "iorate": [{ "label": "4k randread", "points": points, "stop": { "iops": 237_600, "rule": "p99 above 2ms" } }] }),
    );
    let rounds: Vec<f64> = (0..14).map(|r| 90_000.0 + 120_000.0 * (-(r as f64) / 1.5).exp()).collect();
    let steady = write(
        d,
        "steady",
        json!({ "schema_version": 1, "steady_state": [{ "label": "precondition 4k randwrite", "metric": "IOPS", "rounds": rounds }] }),
    );

    let mut problems = Vec::new();
    problems.extend(look_at(d, "runs", &[a, b, long], 9000));
    problems.extend(look_at(d, "sweep-one-thread", &[one], 1500));
    problems.extend(look_at(d, "sweep-several", &[several], 2200));
    problems.extend(look_at(d, "iorate", &[iorate], 1200));
    problems.extend(look_at(d, "steady", &[steady], 1000));
    assert!(problems.is_empty(), "layout problems:\n{}", problems.join("\n"));
}

#[test]
fn the_layout_check_can_fail() {
    let dir = scratch_dir();
    if chromium(dir.path()).is_none() {
        crate::skip::skip(crate::skip::Need::Chromium, "chromium not installed (apt-get install chromium)");
        return;
    }
    // Two labels drawn on top of each other and one off the edge, as a broken plot would.
    let texts: String = (0..25).map(|i| format!("<text x=\"{}\" y=\"380\">tick {i}</text>", 20 + 40 * i)).collect();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body><figure id=\"bad\"><svg width=\"400\" height=\"400\"><text x=\"10\" y=\"20\">0.30000000000000004</text><text x=\"12\" y=\"22\">0.7999999999999999</text>{texts}</svg></figure></body></html>"),
    )
    .unwrap();
    let (problems, texts) = layout_problems(dir.path(), &page);
    assert_eq!(texts, 27);
    assert!(
        problems.iter().any(|p| p.contains("\"0.30000000000000004\" overlaps \"0.7999999999999999\"")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|p| p.contains("\"tick 24\" reaches outside the plot")), "{problems:?}");
}
