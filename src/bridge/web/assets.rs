//! The pages and their scripts and styles, compiled into the binary (no CDN, no files read at
//! run time). One HTML file per page; the board id comes from the page's own URL.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// A static file: its name under `/static/`, media type and content.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    pub name: &'static str,
    pub mime: &'static str,
    pub body: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The asset of the file `assets/<name>`, served as `mime`: the name is written once, for
/// both the URL and the file compiled in.
macro_rules! asset {
    ($name:literal, $mime:expr) => {
        Asset {
            name: $name,
            mime: $mime,
            body: include_str!(concat!("assets/", $name)),
        }
    };
}

pub const HALL: Asset = asset!("hall.html", HTML);
pub const BOARD: Asset = asset!("board.html", HTML);
pub const OVERLAY: Asset = asset!("overlay.html", HTML);

/// Everything under `/static/`.
const STATIC: &[Asset] = &[
    asset!("app.js", JS),
    asset!("start-hall.js", JS),
    asset!("start-board.js", JS),
    asset!("start-overlay.js", JS),
    asset!("style.css", CSS),
];

/// The asset called `name`, if there is one.
pub fn asset(name: &str) -> Option<Asset> {
    STATIC.iter().find(|a| a.name == name).copied()
}

/// An asset as a response.
pub fn serve(asset: Asset) -> Response {
    (
        [
            (header::CONTENT_TYPE, asset.mime),
            // Pages and scripts change with the binary only; a short cache is safe.
            (header::CACHE_CONTROL, "max-age=60"),
        ],
        asset.body,
    )
        .into_response()
}

/// A page.
pub fn page(asset: Asset) -> Response {
    serve(asset)
}
