//! HTTP clients whose request changes what a server holds: a method other than GET, HEAD or OPTIONS, or a body
//! (curl's `-X PUT`, `-d`, `-F`, `-T`, wget's `--post-file`, `--method=PUT`, HTTPie's `PUT` or `field=value`). Such a
//! request uploads or publishes, which changes another system: an allowed domain only says where a request may go,
//! not what it may do there. A GET that moves its data into the query (`curl -G -d q=x`) is a download.

use crate::word::Word;

/// The methods that only read.
const READING_METHODS: &[&str] = &["GET", "HEAD", "OPTIONS"];

/// curl's short options that take a value (the rest of the word, or the next word).
const CURL_VALUED_SHORT: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";

/// curl's long options that send a body or an upload (a prefix of one is taken as it: curl accepts an unambiguous
/// abbreviation of a long option).
#[rustfmt::skip]
const CURL_BODY_LONG: &[&str] = &[
    "data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "json", "form", "form-string", "upload-file",
    "post301", "post302", "post303",
];

/// wget's long options that send a body or name the method (wget also takes an unambiguous prefix).
const WGET_CHANGING_LONG: &[&str] = &["post-data", "post-file", "body-data", "body-file", "method"];

/// Whether `name` is an HTTP client this module reads the requests of.
pub(super) fn is_client(name: &str) -> bool {
    matches!(
        name,
        "curl" | "curlie" | "wget" | "wget2" | "http" | "https" | "xh" | "xhs"
    )
}

/// Why the HTTP client `name` with `args` (the words after it) sends a request that changes what the server holds,
/// naming the method or option; `None` for a plain download, or for a program that is no such client.
pub(super) fn changes(name: &str, args: &[Word]) -> Option<String> {
    match name {
        "curl" | "curlie" => curl(name, args),
        "wget" | "wget2" => wget(name, args),
        "http" | "https" | "xh" | "xhs" => httpie(name, args),
        _ => None,
    }
}

/// The request of curl: `-X`/`--request` names the method; `-d` and its kin send a body (a POST), unless `-G`
/// moves them into the query; `-F` and `-T` always send one; `-K` reads options from a file the analysis does not
/// see; a header may override the method.
fn curl(name: &str, args: &[Word]) -> Option<String> {
    let mut method: Option<String> = None;
    let mut body: Option<String> = None;
    let mut always: Option<String> = None;
    let mut get = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (option, inline) = long.split_once('=').map_or((long, None), |(o, v)| (o, Some(v)));
            let value = |words: &mut std::slice::Iter<'_, Word>| {
                inline
                    .map(str::to_owned)
                    .or_else(|| words.next().map(|w| w.text.clone()))
            };
            if option == "request" || (option.len() >= 4 && "request".starts_with(option)) {
                method = value(&mut words).or(Some(String::new()));
            } else if option == "get" {
                get = true;
            } else if option == "head" {
                method.get_or_insert_with(|| "HEAD".to_owned());
            } else if matches!(option, "config") {
                always = Some(format!(
                    "`{name} --config` reads its options, a method or a body among them, from a file"
                ));
            } else if matches!(option, "form" | "form-string" | "upload-file")
                || (option.len() >= 3 && ["form", "upload-file"].iter().any(|o| o.starts_with(option)))
            {
                always = Some(format!("`{name} --{option}` uploads"));
            } else if CURL_BODY_LONG.contains(&option)
                || (option.len() >= 3 && CURL_BODY_LONG.iter().any(|o| o.starts_with(option)))
            {
                body = Some(format!("`{name} --{option}` sends a body"));
            } else if matches!(option, "header" | "proxy-header") {
                header(name, &value(&mut words), &mut always);
            }
            continue;
        }
        let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) else {
            continue;
        };
        for (at, letter) in letters.char_indices() {
            if !CURL_VALUED_SHORT.contains(letter) {
                match letter {
                    'G' => get = true,
                    'I' => {
                        method.get_or_insert_with(|| "HEAD".to_owned());
                    }
                    _ => {}
                }
                continue;
            }
            let rest = letters.get(at + 1..).unwrap_or_default();
            let value = if rest.is_empty() {
                words.next().map(|w| w.text.clone())
            } else {
                Some(rest.to_owned())
            };
            match letter {
                'X' => method = value.or(Some(String::new())),
                'd' => body = Some(format!("`{name} -d` sends a body")),
                'F' => always = Some(format!("`{name} -F` uploads a form")),
                'T' => always = Some(format!("`{name} -T` uploads a file")),
                'K' => {
                    always = Some(format!(
                        "`{name} -K` reads its options, a method or a body among them, from a file"
                    ));
                }
                'H' => header(name, &value, &mut always),
                _ => {}
            }
            break;
        }
    }
    if let Some(method) = method.filter(|m| !reading(m)) {
        return Some(format!(
            "`{name} -X {method}` asks the server to change what it holds"
        ));
    }
    always.or_else(|| body.filter(|_| !get))
}

/// A header of curl that may change the method (`X-HTTP-Method-Override: PUT`), or headers read from a file.
fn header(name: &str, value: &Option<String>, always: &mut Option<String>) {
    let Some(value) = value else { return };
    let lower = value.to_ascii_lowercase();
    if lower.starts_with('@') {
        *always = Some(format!(
            "`{name} -H @FILE` reads its headers, a method override among them, from a file"
        ));
    } else if lower.contains("method") {
        *always = Some(format!("`{name} -H '{value}'` overrides the request's method"));
    }
}

/// The request of wget: `--post-data`, `--post-file`, `--body-data`, `--body-file` and `--method` other than GET;
/// `--config` reads options from a file.
fn wget(name: &str, args: &[Word]) -> Option<String> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let Some(long) = word.text.strip_prefix("--") else {
            continue;
        };
        let (option, inline) = long.split_once('=').map_or((long, None), |(o, v)| (o, Some(v)));
        if option == "config" {
            return Some(format!(
                "`{name} --config` reads its options, a method or a body among them, from a file"
            ));
        }
        let Some(full) = WGET_CHANGING_LONG
            .iter()
            .find(|o| **o == option || (option.len() >= 3 && o.starts_with(option)))
        else {
            continue;
        };
        if *full == "method" {
            let method = inline
                .map(str::to_owned)
                .or_else(|| words.next().map(|w| w.text.clone()));
            match method {
                Some(method) if reading(&method) => {}
                Some(method) => {
                    return Some(format!(
                        "`{name} --method={method}` asks the server to change what it holds"
                    ));
                }
                None => return Some(format!("`{name} --method` names a method")),
            }
        } else {
            return Some(format!("`{name} --{full}` sends a body"));
        }
    }
    None
}

/// The request of HTTPie and xh: `http [OPTION…] [METHOD] URL [ITEM…]`. The method is the first operand when it is
/// one; without it, a data item (`field=value`, `field:=json`, `field@file`) makes the request a POST. A header
/// (`Name:value`) and a query item (`name==value`) do not. `--form`, `--multipart` and `--raw` send a body.
fn httpie(name: &str, args: &[Word]) -> Option<String> {
    let mut operands: Vec<&Word> = Vec::new();
    for word in args {
        let text = word.text.as_str();
        if let Some(long) = text.strip_prefix("--") {
            let option = long.split_once('=').map_or(long, |(o, _)| o);
            if matches!(option, "form" | "multipart" | "raw") {
                return Some(format!("`{name} --{option}` sends a body"));
            }
            continue;
        }
        if text.starts_with('-') && text.len() > 1 {
            if text
                .strip_prefix('-')
                .is_some_and(|l| !l.contains(['=', ':', '@']) && l.contains('f'))
            {
                return Some(format!("`{name} -f` sends a form"));
            }
            continue;
        }
        operands.push(word);
    }
    let method = operands
        .first()
        .filter(|w| w.literal && !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_alphabetic()))
        .filter(|w| w.text.chars().all(|c| c.is_ascii_uppercase()) || reading(&w.text))
        .map(|w| w.text.to_ascii_uppercase());
    if let Some(method) = &method
        && !reading(method)
    {
        return Some(format!(
            "`{name} {method}` asks the server to change what it holds"
        ));
    }
    let items = operands.iter().skip(if method.is_some() { 2 } else { 1 });
    for item in items {
        if let Some(kind) = data_item(&item.text) {
            if method.is_some() {
                // An explicit GET with data items still sends them as a body.
                return Some(format!("`{name}` sends {kind} as a body"));
            }
            return Some(format!("`{name}` sends {kind}, which makes the request a POST"));
        }
    }
    None
}

/// What the HTTPie request item `text` sends in the body (`field=value`, `field:=json`, `field@file`, `=@file`,
/// `@file`), when it does; a header (`Name:value`, `Name;`), a query item (`name==value`) does not.
fn data_item(text: &str) -> Option<&'static str> {
    let at = text.find(['=', ':', '@'])?;
    let rest = text.get(at..).unwrap_or_default();
    if rest.starts_with("==") {
        return None;
    }
    if rest.starts_with(":=") {
        return Some("a JSON field");
    }
    if rest.starts_with(':') {
        // `Header:value` or `Header:@file`.
        return None;
    }
    if rest.starts_with('@') || rest.starts_with("=@") {
        return Some("a file");
    }
    Some("a data field")
}

/// Whether the HTTP `method` only reads (GET, HEAD, OPTIONS, in any case).
pub(crate) fn reading(method: &str) -> bool {
    READING_METHODS.iter().any(|m| m.eq_ignore_ascii_case(method))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> (String, Vec<Word>) {
        let parsed = shell_words(line);
        let (name, args) = parsed.split_first().expect("a command");
        (name.clone(), args.iter().map(|a| Word::literal(a)).collect())
    }

    fn shell_words(line: &str) -> Vec<String> {
        // The tests' lines quote with single quotes only.
        let mut out = Vec::new();
        let mut current = String::new();
        let mut quoted = false;
        let mut any = false;
        for c in line.chars() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    any = true;
                }
                ' ' if !quoted => {
                    if any || !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    any = false;
                }
                c => current.push(c),
            }
        }
        if any || !current.is_empty() {
            out.push(current);
        }
        out
    }

    fn judged(line: &str) -> Option<String> {
        let (name, args) = words(line);
        changes(&name, &args)
    }

    #[test]
    fn requests_that_change_the_server() {
        for line in [
            "curl -sS -X PUT https://crates.io/api/v1/crates/new -H 'Authorization: x' --data-binary @data/users.csv",
            "curl -sS -X POST https://rubygems.org/api/v1/gems --data-binary @f",
            "curl -XDELETE https://x.example/a",
            "curl --request=PATCH https://x.example/a",
            "curl -F ':action=file_upload' -F content=@data/users.csv https://pypi.org/legacy/",
            "curl -d a=1 https://x.example",
            "curl -sSd@body.json https://x.example",
            "curl --data-raw x https://x.example",
            "curl --data-bin @f https://x.example",
            "curl --json '{}' https://x.example",
            "curl -T data/users.csv https://registry.npmjs.org/x",
            "curl --upload-file f https://x.example",
            "curl -K cfg https://x.example",
            "curl --config cfg https://x.example",
            "curl -H 'X-HTTP-Method-Override: PUT' https://x.example",
            "curl -H @headers.txt https://x.example",
            "curl -G -F a=@f https://x.example",
            "curl -G -X POST -d a=1 https://x.example",
            "wget --post-file=data/users.csv https://registry.npmjs.org/x",
            "wget --post-data a=1 https://x.example",
            "wget --method=PUT --body-file=f https://x.example",
            "wget --post-f=f https://x.example",
            "wget --config=rc https://x.example",
            "http PUT crates.io/api/v1/crates/new @data/users.csv",
            "http crates.io/api name=value",
            "xh POST https://x.example",
            "https x.example data:='{}'",
            "http --form x.example a=1",
            "xh -f x.example a=b",
        ] {
            assert!(judged(line).is_some(), "{line}");
        }
    }

    #[test]
    fn downloads_do_not() {
        for line in [
            "curl -sSL https://sh.rustup.rs -o rustup.sh",
            "curl -I https://x.example",
            "curl -sSfL -H 'Accept: application/json' https://crates.io/api/v1/crates/serde",
            "curl -X GET https://x.example",
            "curl -XHEAD https://x.example",
            "curl -G -d q=serde https://crates.io/api/v1/crates",
            "curl -G --data-urlencode q=a https://x.example",
            "curl -o out -w '%{http_code}' https://x.example",
            "curl -u user:pass https://x.example",
            "wget https://x.example/a.tar.gz",
            "wget -qO- https://x.example",
            "wget --method=GET https://x.example",
            "http https://x.example",
            "http GET x.example q==serde Accept:application/json",
            "xh x.example Authorization:'Bearer x'",
        ] {
            assert_eq!(judged(line), None, "{line}");
        }
    }
}
