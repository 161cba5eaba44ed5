//! The facts of a web call (WebFetch): the host its URL names, and whether it reaches an internal address.

use agent_tool_traits::{Decision, Layer};

use super::Gathering;

impl Gathering<'_> {
    /// The host of `url` for the rules to match. Only the web: a `file:` or other scheme would read local files
    /// past the Read rules, and is denied; a URL without a host asks.
    pub(super) fn web(&mut self, url: &str, host: Option<String>) -> Option<String> {
        if !is_web_url(url) {
            self.find(
                Decision::Deny,
                format!("`{url}` is not an http(s) URL"),
                Layer::Tool,
            );
            return None;
        }
        if host.is_none() {
            self.find(
                Decision::Ask,
                format!("the URL `{url}` has no host to check"),
                Layer::Tool,
            );
        }
        self.internal_url(url);
        host
    }

    /// A URL that reaches this machine or its private network asks in every mode: local services and a cloud's
    /// credential endpoint are not the web.
    pub(super) fn internal_url(&mut self, url: &str) {
        if let Some(why) = super::address::internal_place(url) {
            self.find(Decision::Ask, why, Layer::Tool);
        }
    }
}

/// Whether `url` uses http or https (scheme names are case-insensitive).
fn is_web_url(url: &str) -> bool {
    url.trim().split_once(':').is_some_and(|(scheme, _)| {
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_are_the_web() {
        for url in ["http://example.com", "HTTPS://example.com/x", " https://a"] {
            assert!(is_web_url(url), "{url}");
        }
        for url in [
            "file:///etc/passwd",
            "ftp://example.com",
            "example.com",
            "javascript:alert(1)",
        ] {
            assert!(!is_web_url(url), "{url}");
        }
    }
}
