//! One chart as a file of its own: a standalone SVG (with its namespace back), or a PNG rendered
//! without a browser (resvg, with the system's fonts) at twice the SVG's size, crisp in print.
//!
//! It converts finished SVG only; which chart is `charts`' business.

/// How much larger than the SVG's pixel size the PNG is drawn.
pub const PNG_SCALE: f32 = 2.0;

/// Families tried, in order, for the charts' `sans-serif` text.
const SANS: [&str; 5] = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "Helvetica"];

#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error(
        "no fonts found for the PNG's text (looked for {}); install one (apt-get install fonts-dejavu-core) or write --format svg",
        SANS.join(", ")
    )]
    NoFonts,
    #[error("cannot render the chart as PNG: {0}")]
    Render(String),
}

/// An inline chart (as `plot` draws it, without the XML namespace) as a standalone SVG document.
pub fn standalone_svg(inline: &str) -> String {
    let svg = if inline.contains("xmlns=") {
        inline.to_string()
    } else {
        inline.replacen("<svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"", 1)
    };
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}")
}

/// The chart rendered to PNG at [`PNG_SCALE`] times its size, on white.
///
/// # Errors
/// [`RasterError::NoFonts`] when none of the sans-serif families is installed; `Render` if the SVG
/// does not parse (a bug in `plot`).
pub fn png(inline: &str) -> Result<Vec<u8>, RasterError> {
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    let family = SANS
        .iter()
        .find(|name| db.faces().any(|f| f.families.iter().any(|(n, _)| n == *name)))
        .ok_or(RasterError::NoFonts)?;
    db.set_sans_serif_family(*family);
    let tree =
        resvg::usvg::Tree::from_str(&standalone_svg(inline), &opt).map_err(|e| RasterError::Render(e.to_string()))?;
    let size = tree.size().to_int_size().scale_by(PNG_SCALE).ok_or_else(|| RasterError::Render("empty size".into()))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| RasterError::Render("the image is too large".into()))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| RasterError::Render(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<svg width=\"40\" height=\"20\" viewBox=\"0 0 40 20\"><rect x=\"0\" y=\"0\" width=\"20\" height=\"20\" fill=\"#000\"/></svg>";

    #[test]
    fn standalone_svg_gets_its_namespace_once() {
        let s = standalone_svg(SVG);
        assert!(s.starts_with("<?xml") && s.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width"));
        assert_eq!(standalone_svg(&s[s.find("<svg").unwrap()..]).matches("xmlns=").count(), 1);
    }

    #[test]
    fn png_is_drawn_at_twice_the_size() {
        match png(SVG) {
            Ok(bytes) => {
                assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
                let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
                assert_eq!((be(16), be(20)), (80, 40));
            }
            Err(RasterError::NoFonts) => {
                crate::skip::skip(crate::skip::Need::Fonts, "no fonts installed (apt-get install fonts-dejavu-core)")
            }
            Err(e) => panic!("{e}"),
        }
    }
}
