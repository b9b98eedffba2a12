//! The simulator on a real pty, talked to through tokio-serial exactly as the daemon's serial
//! side opens a port (9600 8N1): answers, update modes, unplug / replug behind a link.

mod sim_support;

use std::time::Duration;

use eboard_sim::clock::ClockSide;
use eboard_sim::pty::{SimBoard, SimOptions};
use eboard_sim::virtual_board::UpdateMode;
use shakmaty::Square;
use sim_support::open_port as open;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;
use tokio_serial::SerialStream;

async fn read_exact(port: &mut SerialStream, n: usize) -> Vec<u8> {
    let mut out = vec![0; n];
    timeout(Duration::from_secs(5), port.read_exact(&mut out))
        .await
        .expect("board answered in time")
        .expect("read from port");
    out
}

#[tokio::test]
async fn answers_queries_and_sends_updates() {
    let sim = SimBoard::spawn(SimOptions {
        speed: 100.0,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let mut port = open(&sim.path());
    port.write_all(&[0x40, 0x4D]).await.unwrap();
    assert_eq!(read_exact(&mut port, 5).await, [0x93, 0, 5, 3, 10]);
    port.write_all(&[0x44]).await.unwrap();
    assert_eq!(
        sim.wait_for_update_mode(Duration::from_secs(5))
            .await
            .unwrap(),
        UpdateMode::UpdateBoard
    );
    sim.lift(Square::E2).await.unwrap();
    assert_eq!(read_exact(&mut port, 5).await, [0x8E, 0, 5, 52, 0]);
    sim.shutdown().await;
}

#[tokio::test]
async fn unplug_and_replug_behind_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dgt");
    let sim = SimBoard::spawn(SimOptions {
        link: Some(link.clone()),
        speed: 100.0,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    assert_eq!(sim.path(), link);
    let mut port = open(&link);
    port.write_all(&[0x4B]).await.unwrap();
    sim.wait_for_update_mode(Duration::from_secs(5))
        .await
        .unwrap();
    // The first clock message after entering UPDATE_NICE.
    assert_eq!(read_exact(&mut port, 10).await[..3], [0x8D, 0, 10]);

    sim.unplug().await.unwrap();
    assert!(!link.exists(), "the link goes away with the device");
    let mut buf = [0u8; 16];
    let n = timeout(Duration::from_secs(5), port.read(&mut buf))
        .await
        .unwrap();
    assert!(
        matches!(n, Ok(0) | Err(_)),
        "the host sees the port close: {n:?}"
    );
    // A move made while unplugged is seen by the board but reported to nobody.
    sim.lift(Square::E2).await.unwrap();
    drop(port);

    sim.replug().await.unwrap();
    assert!(link.exists());
    let mut port = open(&link);
    assert_eq!(sim.snapshot().await.unwrap().mode, UpdateMode::Idle);
    port.write_all(&[0x42]).await.unwrap();
    let dump = read_exact(&mut port, 67).await;
    assert_eq!(dump[3 + 52], 0, "e2 was emptied while unplugged");
    sim.press_lever(ClockSide::Right).await.unwrap();
    sim.shutdown().await;
    assert!(!link.exists(), "shutdown removes the link");
}

#[tokio::test]
async fn host_can_close_and_reopen_the_port() {
    let sim = SimBoard::spawn(SimOptions {
        speed: 100.0,
        ..SimOptions::default()
    })
    .await
    .unwrap();
    for _ in 0..3 {
        let mut port = open(&sim.path());
        port.write_all(&[0x4D]).await.unwrap();
        assert_eq!(read_exact(&mut port, 5).await, [0x93, 0, 5, 3, 10]);
        drop(port);
    }
    sim.shutdown().await;
}
