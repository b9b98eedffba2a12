//! A canonical form of D-Bus introspection XML, to compare the running daemon's with the
//! shipped files regardless of member order, whitespace and comments.

/// The attributes of one tag, in order.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq]
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("");
        let after = &rest[eq + 2..];
        let end = after.find('"').expect("unterminated attribute");
        out.push((key.to_owned(), after[..end].to_owned()));
        rest = &after[end + 1..];
    }
    out
}

fn attr(attrs: &[(String, String)], key: &str) -> String {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// The members of interface `iface` as sorted one-line descriptions, e.g.
/// `method AddBoard(in port s, out  o)`; `None` if the interface is absent.
pub fn interface_members(xml: &str, iface: &str) -> Option<Vec<String>> {
    // Drop comments and the doctype.
    let mut text = String::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<!--") {
        text.push_str(&rest[..start]);
        let end = rest[start..].find("-->").expect("unterminated comment");
        rest = &rest[start + end + 3..];
    }
    text.push_str(rest);

    let mut inside = false;
    let mut found = false;
    let mut members = Vec::new();
    let mut current: Option<(String, String, Vec<String>)> = None;
    let mut rest = text.as_str();
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').expect("unterminated tag") + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let closing = tag.starts_with('/');
        let self_closing = tag.ends_with('/');
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        let attrs = attributes(tag);
        match (name, closing) {
            ("interface", false) => {
                inside = attr(&attrs, "name") == iface;
                found |= inside;
            }
            ("interface", true) => inside = false,
            _ if !inside => {}
            ("method" | "signal" | "property", false) => {
                let mut head = vec![];
                if name == "property" {
                    head.push(format!(
                        "{} {}",
                        attr(&attrs, "type"),
                        attr(&attrs, "access")
                    ));
                }
                let member = (name.to_owned(), attr(&attrs, "name"), head);
                if self_closing {
                    members.push(describe(&member));
                } else {
                    current = Some(member);
                }
            }
            ("method" | "signal" | "property", true) => {
                if let Some(m) = current.take() {
                    members.push(describe(&m));
                }
            }
            ("arg", false) => {
                if let Some((kind, _, parts)) = current.as_mut() {
                    let dir = attr(&attrs, "direction");
                    let dir = if dir.is_empty() && kind == "method" {
                        "in".into()
                    } else {
                        dir
                    };
                    parts.push(format!(
                        "{dir} {} {}",
                        attr(&attrs, "name"),
                        attr(&attrs, "type")
                    ));
                }
            }
            ("annotation", false) => {
                if let Some((_, _, parts)) = current.as_mut() {
                    parts.push(format!(
                        "@{}={}",
                        attr(&attrs, "name"),
                        attr(&attrs, "value")
                    ));
                }
            }
            _ => {}
        }
    }
    members.sort();
    found.then_some(members)
}

fn describe((kind, name, parts): &(String, String, Vec<String>)) -> String {
    format!("{kind} {name}({})", parts.join(", "))
}
