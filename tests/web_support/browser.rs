//! Debian's real `chromium`, headless, driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: commands on fd 3, answers on fd 4, NUL-separated JSON), so a
//! test can wait for a condition in the page instead of guessing a delay, read the rendered
//! DOM and take screenshots.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use crate::common::{WAIT, die_with_parent, within};

/// Where the tests leave their screenshots (kept after the run, for people to look at).
pub fn screenshot_dir() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("web-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// A running browser with one page attached.
pub struct Browser {
    _child: Child,
    to_browser: std::fs::File,
    from_browser: mpsc::UnboundedReceiver<Value>,
    next_id: u64,
    session: Option<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromium. It must be installed (`.ci/run` installs Debian's `chromium`): a
    /// missing browser fails the test rather than skipping it.
    pub async fn launch() -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let (cmd_read, cmd_write) = nix::unistd::pipe().expect("pipe");
        let (ans_read, ans_write) = nix::unistd::pipe().expect("pipe");
        let mut cmd = Command::new("chromium");
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            "--window-size=1920,1080",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
        die_with_parent(&mut cmd);
        let (r, w) = (cmd_read.as_raw_fd(), ans_write.as_raw_fd());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The fds
        // are first moved above 100 so that placing them at 3 and 4 cannot clobber either.
        unsafe {
            cmd.pre_exec(move || {
                let hi_r = nix::libc::fcntl(r, nix::libc::F_DUPFD, 100);
                let hi_w = nix::libc::fcntl(w, nix::libc::F_DUPFD, 100);
                if hi_r < 0 || hi_w < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if nix::libc::dup2(hi_r, 3) < 0 || nix::libc::dup2(hi_w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .expect("chromium must be installed (Debian package chromium)");
        drop((cmd_read, ans_write));
        let from_browser = reader(ans_read);
        let mut b = Browser {
            _child: child,
            to_browser: std::fs::File::from(cmd_write),
            from_browser,
            next_id: 0,
            session: None,
            _profile: profile,
        };
        let target = b
            .call("Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let target_id = target["targetId"].as_str().expect("targetId").to_owned();
        let attached = b
            .call(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await;
        b.session = Some(
            attached["sessionId"]
                .as_str()
                .expect("sessionId")
                .to_owned(),
        );
        b.call("Page.enable", json!({})).await;
        b.size(1920, 1080).await;
        b
    }

    /// Sends one command (to the page once attached) and waits for its answer.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("write to chromium");
        let rx = &mut self.from_browser;
        within(WAIT * 2, method, async {
            loop {
                let answer = rx.recv().await.expect("chromium went away");
                if answer["id"] == id {
                    if let Some(err) = answer.get("error") {
                        panic!("{method}: {err}");
                    }
                    return answer["result"].clone();
                }
            }
        })
        .await
    }

    /// The viewport size in CSS pixels.
    pub async fn size(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await;
    }

    /// The colour behind a transparent page (None: the browser's white).
    pub async fn background(&mut self, rgba: Option<(u8, u8, u8, f64)>) {
        let params = match rgba {
            Some((r, g, b, a)) => json!({"color": {"r": r, "g": g, "b": b, "a": a}}),
            None => json!({}),
        };
        self.call("Emulation.setDefaultBackgroundColorOverride", params)
            .await;
    }

    pub async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// Evaluates `expr` in the page and returns its value.
    pub async fn eval(&mut self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true}),
            )
            .await;
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits (polling the page) until `expr` is true.
    pub async fn wait_for(&mut self, what: &str, expr: &str) {
        let deadline = tokio::time::Instant::now() + WAIT * 3;
        loop {
            // Right after a navigation the old document may still answer: errors are retried.
            let r = self
                .call(
                    "Runtime.evaluate",
                    json!({"expression": format!("!!({expr})"), "returnByValue": true}),
                )
                .await;
            if r["result"]["value"] == true {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                let dom = self.dom().await;
                panic!("timed out waiting for {what} ({expr}); the page is:\n{dom}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The rendered DOM.
    pub async fn dom(&mut self) -> String {
        self.eval("document.documentElement.outerHTML")
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// A PNG of the viewport, saved as `name` in [`screenshot_dir`]; returns its path.
    pub async fn screenshot(&mut self, name: &str) -> std::path::PathBuf {
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("data"))
            .expect("base64 PNG");
        let path = screenshot_dir().join(name);
        std::fs::write(&path, png).expect("write screenshot");
        path
    }
}

/// Reads NUL-separated JSON messages from chromium on a thread of its own.
fn reader(fd: OwnedFd) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let mut f = std::fs::File::from(fd);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            let n = match f.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            buf.extend_from_slice(&chunk[..n]);
            while let Some(end) = buf.iter().position(|&b| b == 0) {
                let msg: Vec<u8> = buf.drain(..=end).collect();
                if let Ok(v) = serde_json::from_slice::<Value>(&msg[..msg.len() - 1])
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        }
    });
    rx
}
