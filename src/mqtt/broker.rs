//! Where the broker is and how to log in: `mqtt://` / `mqtts://` URLs, user and password from
//! the URL or a password file, the CA to trust for TLS, and the rumqttc options built from
//! them. Shared by the relay and the hall's subscribers (`watch --mqtt`, `serve --mqtt`).
//!
//! Both speak MQTT 5 ([`rumqttc::v5`]) for one reason: its Maximum Packet Size, sent in
//! CONNECT. A broker is a place anyone at the venue may publish to, and mosquitto's default
//! has no size limit. Under MQTT 3.1.1 a packet over the client's limit is a connection
//! error; the broker sends the same retained message again at every reconnect, and the
//! client loops, reconnecting twice a second. Under MQTT 5 the broker does not send this
//! client a packet over [`MAX_PACKET`] (mosquitto drops it for this client and says so in
//! its log); below that, a message over the readers' payload bounds (an `event` 16 KiB, a
//! `state` 512 KiB) is read, refused by name in the log and counted, and the connection
//! carries on. A broker that speaks only 3.1.1 refuses the connection, which is said.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::v5::mqttbytes::v5::LastWill;
use rumqttc::v5::{ConnectionError, MqttOptions};

/// The largest packet either side takes (the Maximum Packet Size of MQTT 5, see the
/// module). Generous: eight times the largest payload the readers take (a `state` of
/// 512 KiB; a PGN with clock comments of a long game is some tens of kB), so that a message
/// past the readers' bounds still reaches them and is refused in words; and a bound on what
/// one message costs in memory (rumqttc reads up to ten packets at a time).
pub const MAX_PACKET: usize = 4 << 20;

/// A broker setting that cannot work, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerError(pub String);

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BrokerError {}

/// A parsed `--mqtt URL`.
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl fmt::Debug for BrokerUrl {
    /// Never prints the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrokerUrl")
            .field("tls", &self.tls)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .finish()
    }
}

impl fmt::Display for BrokerUrl {
    /// The URL without the password, for messages and logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        let user = match &self.user {
            Some(u) => format!("{u}@"),
            None => String::new(),
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "{scheme}://{user}{host}:{}", self.port)
    }
}

impl BrokerUrl {
    /// Parses `mqtt://[user[:password]@]host[:port][/]` or `mqtts://…` (default ports 1883
    /// and 8883). User and password may be percent-encoded.
    pub fn parse(text: &str) -> Result<BrokerUrl, BrokerError> {
        let bad = |why: String| BrokerError(format!("--mqtt {}: {why}", redact(text)));
        let url = url::Url::parse(text).map_err(|e| {
            bad(format!(
                "not a URL ({e}); want mqtt://host[:port] or mqtts://host[:port]"
            ))
        })?;
        let (tls, default_port) = match url.scheme() {
            "mqtt" | "tcp" => (false, 1883),
            "mqtts" | "ssl" => (true, 8883),
            other => {
                return Err(bad(format!(
                    "unknown scheme {other:?}; want mqtt:// or mqtts://"
                )));
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) if !d.is_empty() => d.to_owned(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            _ => return Err(bad("names no host".into())),
        };
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(bad(
                "has a path, query or fragment; the topics are set with --prefix and --rig".into(),
            ));
        }
        let decode = |s: &str, what: &str| {
            percent_decode(s)
                .ok_or_else(|| bad(format!("the {what} is not valid percent-encoding")))
        };
        let user = match url.username() {
            "" => None,
            u => Some(decode(u, "user name")?),
        };
        let password = match url.password() {
            None => None,
            Some(p) => Some(decode(p, "password")?),
        };
        if password.is_some() && user.is_none() {
            return Err(bad(
                "has a password but no user name (MQTT needs both)".into()
            ));
        }
        Ok(BrokerUrl {
            tls,
            host,
            port: url.port().unwrap_or(default_port),
            user,
            password,
        })
    }
}

/// `text` with the password of a URL replaced, for error messages.
fn redact(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => text.to_owned(),
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The password in a `--password-file`: its first line, without the line end.
pub fn read_password_file(path: &Path) -> Result<String, BrokerError> {
    let text = crate::bounded_read::read_text(path, crate::bounded_read::SECRET)
        .map_err(|e| BrokerError(format!("--password-file {}: {e}", path.display())))?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(BrokerError(format!(
            "--password-file {}: the first line is empty",
            path.display()
        )));
    }
    Ok(line.to_owned())
}

/// Everything needed to connect.
#[derive(Debug, Clone)]
pub struct Broker {
    pub url: BrokerUrl,
    /// A PEM file of CA certificates to trust instead of the system's.
    pub ca: Option<PathBuf>,
}

impl Broker {
    /// The URL, plus the password from `password_file` (which must not clash with one in the
    /// URL), plus the CA file (only with `mqtts://`).
    pub fn new(
        url: &str,
        password_file: Option<&Path>,
        ca: Option<&Path>,
    ) -> Result<Broker, BrokerError> {
        let mut url = BrokerUrl::parse(url)?;
        if let Some(path) = password_file {
            if url.password.is_some() {
                return Err(BrokerError(
                    "the password is given twice: in the --mqtt URL and by --password-file; \
                     keep one (the file keeps it out of `ps`)"
                        .into(),
                ));
            }
            if url.user.is_none() {
                return Err(BrokerError(
                    "--password-file needs a user name in the URL: mqtt://USER@host".into(),
                ));
            }
            url.password = Some(read_password_file(path)?);
        }
        if ca.is_some() && !url.tls {
            return Err(BrokerError(
                "--ca is for TLS: use an mqtts:// URL with it".into(),
            ));
        }
        Ok(Broker {
            url,
            ca: ca.map(Path::to_path_buf),
        })
    }

    /// rumqttc options (MQTT 5) for a connection as `client_id`, with the Last Will if any.
    /// Clean sessions always: what must survive a lost connection is kept by the caller, who
    /// knows what is worth sending again.
    pub fn options(
        &self,
        client_id: &str,
        will: Option<LastWill>,
    ) -> Result<MqttOptions, BrokerError> {
        let mut o = MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        o.set_clean_start(true)
            .set_keep_alive(Duration::from_secs(15))
            // Told to the broker in CONNECT, and the bound rumqttc reads packets within.
            .set_max_packet_size(Some(MAX_PACKET as u32));
        if let Some(w) = will {
            o.set_last_will(w);
        }
        if let Some(user) = &self.url.user {
            o.set_credentials(user.clone(), self.url.password.clone().unwrap_or_default());
        }
        if self.url.tls {
            o.set_transport(rumqttc::Transport::tls_with_config(
                rumqttc::TlsConfiguration::Rustls(Arc::new(self.tls_config()?)),
            ));
        }
        Ok(o)
    }

    /// TLS with the system's CA store, or the `--ca` file's certificates.
    fn tls_config(&self) -> Result<rustls::ClientConfig, BrokerError> {
        let mut roots = rustls::RootCertStore::empty();
        match &self.ca {
            Some(path) => {
                let certs = read_pem_certs(path)?;
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    return Err(BrokerError(format!(
                        "--ca {}: no usable certificate in it",
                        path.display()
                    )));
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(BrokerError(
                        "mqtts://: the system has no CA certificates (install ca-certificates, \
                         or name the broker's CA with --ca FILE)"
                            .into(),
                    ));
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| BrokerError(format!("TLS set-up: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(config)
    }
}

/// The certificates of a PEM file.
fn read_pem_certs(
    path: &Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, BrokerError> {
    use rustls::pki_types::pem::PemObject;
    let bad = |why: String| BrokerError(format!("--ca {}: {why}", path.display()));
    let data = crate::bounded_read::read_bytes(path, crate::bounded_read::CERTIFICATES)
        .map_err(|e| bad(e.to_string()))?;
    rustls::pki_types::CertificateDer::pem_slice_iter(&data)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("not a PEM certificate file: {e}")))
}

/// Why a connection attempt failed, in words an operator can act on.
pub fn describe(err: &ConnectionError) -> String {
    use rumqttc::v5::mqttbytes::v5::ConnectReturnCode;
    match err {
        ConnectionError::ConnectionRefused(code) => match code {
            ConnectReturnCode::BadUserNamePassword => {
                "the broker refused the user name or password".into()
            }
            ConnectReturnCode::NotAuthorized => "the broker says: not authorised".into(),
            ConnectReturnCode::UnsupportedProtocolVersion
            | ConnectReturnCode::RefusedProtocolVersion => {
                "the broker does not speak MQTT 5 (mosquitto 1.6 and later do; see the \
                 README's broker section)"
                    .into()
            }
            other => format!("the broker refused the connection ({other:?})"),
        },
        ConnectionError::Io(e) => format!("network: {e}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_defaults() {
        let u = BrokerUrl::parse("mqtt://broker.hall").expect("plain");
        assert_eq!(
            (u.tls, u.host.as_str(), u.port),
            (false, "broker.hall", 1883)
        );
        assert_eq!(u.user, None);
        let u = BrokerUrl::parse("mqtts://relay:s%40cret@10.0.0.5:9000/").expect("tls");
        assert_eq!((u.tls, u.host.as_str(), u.port), (true, "10.0.0.5", 9000));
        assert_eq!(u.user.as_deref(), Some("relay"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.to_string(), "mqtts://relay@10.0.0.5:9000");
        assert!(!format!("{u:?}").contains("s@cret"));
        let u = BrokerUrl::parse("mqtt://[::1]:1884").expect("v6");
        assert_eq!((u.host.as_str(), u.port), ("::1", 1884));
        assert_eq!(u.to_string(), "mqtt://[::1]:1884");
    }

    #[test]
    fn bad_urls_are_refused_by_name_without_the_password() {
        for (url, says) in [
            ("http://h", "unknown scheme"),
            ("mqtt://", "host"),
            ("mqtt://h/topic", "path"),
            ("mqtt://h?x=1", "query"),
            ("mqtt://:pw@h", "no user name"),
            ("broker:1883", "scheme"),
            ("not a url", "not a URL"),
        ] {
            let e = BrokerUrl::parse(url).expect_err(url);
            assert!(e.0.starts_with("--mqtt"), "{url}: {e}");
            assert!(e.0.contains(says), "{url}: {e}");
        }
        let e = BrokerUrl::parse("mqtt://u:topsecret@h/x").expect_err("path");
        assert!(!e.0.contains("topsecret"), "{e}");
    }

    #[test]
    fn password_file_and_ca_rules() {
        let dir = tempfile::tempdir().expect("dir");
        let pw = dir.path().join("pw");
        std::fs::write(&pw, "hunter2\n").expect("write");
        let b = Broker::new("mqtt://relay@h", Some(&pw), None).expect("file");
        assert_eq!(b.url.password.as_deref(), Some("hunter2"));
        let e = Broker::new("mqtt://relay:x@h", Some(&pw), None).expect_err("twice");
        assert!(e.0.contains("twice"), "{e}");
        let e = Broker::new("mqtt://h", Some(&pw), None).expect_err("no user");
        assert!(e.0.contains("user name"), "{e}");
        let e =
            Broker::new("mqtt://u@h", Some(&dir.path().join("none")), None).expect_err("missing");
        assert!(e.0.contains("cannot read"), "{e}");
        std::fs::write(&pw, "\n").expect("write");
        let e = Broker::new("mqtt://u@h", Some(&pw), None).expect_err("empty");
        assert!(e.0.contains("empty"), "{e}");
        let e = Broker::new("mqtt://h", None, Some(&pw)).expect_err("ca without tls");
        assert!(e.0.contains("mqtts"), "{e}");
        let b = Broker::new("mqtts://h", None, Some(&pw)).expect("ca");
        let e = b.options("x", None).expect_err("not a PEM");
        assert!(e.0.contains("--ca"), "{e}");
    }

    #[test]
    fn an_endless_password_or_ca_file_is_refused_by_name_without_hanging() {
        let zero = Path::new("/dev/zero");
        let e = Broker::new("mqtt://u@h", Some(zero), None).expect_err("endless password");
        assert!(
            e.0.contains("--password-file /dev/zero") && e.0.contains("never ends"),
            "{e}"
        );
        let b = Broker::new("mqtts://h", None, Some(zero)).expect("ca named");
        let e = b.options("x", None).expect_err("endless ca");
        assert!(
            e.0.contains("--ca /dev/zero") && e.0.contains("never ends"),
            "{e}"
        );
    }
}
