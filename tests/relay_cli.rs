//! `eboardctl relay` and `watch --mqtt` refuse bad options at start with exit code 2 and a
//! message naming the option at fault, before touching the bus or a broker.

mod common;
mod ctl_support;

use ctl_support::ctl;

/// An address nobody listens on: the refusals must come before any connection attempt.
const NO_BUS: &str = "unix:path=/nonexistent/bus";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_relay_options_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").expect("write");
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(
        &not_pem,
        "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
    )
    .expect("write");
    let (empty, not_pem) = (empty.display().to_string(), not_pem.display().to_string());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["relay", "--mqtt", "http://broker"], "--mqtt"),
        (vec!["relay", "--mqtt", "mqtt://"], "names no host"),
        (vec!["relay", "--mqtt", "mqtt://h/topic"], "path"),
        (vec!["relay", "--mqtt", "mqtt://h", "--rig", "a/b"], "--rig"),
        (
            vec!["relay", "--mqtt", "mqtt://h", "--prefix", "a/#"],
            "--prefix",
        ),
        (
            vec!["relay", "--mqtt", "mqtt://h", "--max-queued", "100"],
            "--max-queued",
        ),
        (
            vec!["relay", "--mqtt", "mqtt://u@h", "--password-file", &empty],
            "--password-file",
        ),
        (
            vec!["relay", "--mqtt", "mqtt://u:p@h", "--password-file", &empty],
            "twice",
        ),
        (
            vec!["relay", "--mqtt", "mqtt://h", "--ca", &not_pem],
            "--ca is for TLS",
        ),
        (
            vec!["relay", "--mqtt", "mqtts://h", "--ca", &not_pem],
            "--ca",
        ),
        (vec!["watch", "--mqtt", "ftp://h"], "--mqtt"),
        (
            vec!["watch", "--mqtt", "mqtt://h", "--prefix", ""],
            "--prefix",
        ),
    ];
    for (args, says) in cases {
        let out = ctl(NO_BUS, &args).await;
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains(says),
            "{args:?} should say {says:?}: {out:?}"
        );
    }
    // The password never appears in a message.
    let out = ctl(NO_BUS, &["relay", "--mqtt", "mqtt://u:hunter2@h/x"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!out.stderr.contains("hunter2"), "{out:?}");
}
