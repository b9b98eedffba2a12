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

pub const HALL: Asset = Asset {
    name: "hall.html",
    mime: HTML,
    body: include_str!("assets/hall.html"),
};
pub const BOARD: Asset = Asset {
    name: "board.html",
    mime: HTML,
    body: include_str!("assets/board.html"),
};
pub const OVERLAY: Asset = Asset {
    name: "overlay.html",
    mime: HTML,
    body: include_str!("assets/overlay.html"),
};

/// Everything under `/static/`.
const STATIC: &[Asset] = &[
    Asset {
        name: "app.js",
        mime: "text/javascript; charset=utf-8",
        body: include_str!("assets/app.js"),
    },
    Asset {
        name: "start-hall.js",
        mime: "text/javascript; charset=utf-8",
        body: include_str!("assets/start-hall.js"),
    },
    Asset {
        name: "start-board.js",
        mime: "text/javascript; charset=utf-8",
        body: include_str!("assets/start-board.js"),
    },
    Asset {
        name: "start-overlay.js",
        mime: "text/javascript; charset=utf-8",
        body: include_str!("assets/start-overlay.js"),
    },
    Asset {
        name: "style.css",
        mime: "text/css; charset=utf-8",
        body: include_str!("assets/style.css"),
    },
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
