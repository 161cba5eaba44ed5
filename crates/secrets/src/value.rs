//! What makes a matched value a credential: the checks of the rules' values (written-in values, not references,
//! expressions or placeholders; random tokens; qualifier words after a secret's name).

/// Words that, after the secret's word in a name, say which of several secrets it is (`DATABASE_PASSWORD_PROD`,
/// `PASSWORD_2`, `SECRET_KEY_BASE`) or name a secret again (`oauth_token_secret`), lowercase; a number is one
/// too. Any other word names something else (`PASSWORD_MIN_LENGTH`, `token_start`, `private_key_ops`), which the
/// value is not a secret of.
const QUALIFIER_WORDS: &[&str] = &[
    "key",
    "base",
    "value",
    "prod",
    "production",
    "prd",
    "dev",
    "development",
    "staging",
    "stage",
    "stg",
    "test",
    "testing",
    "qa",
    "uat",
    "live",
    "local",
    "remote",
    "primary",
    "secondary",
    "main",
    "master",
    "backup",
    "old",
    "new",
    "current",
    "prev",
    "previous",
    "next",
    "admin",
    "root",
    "user",
    "app",
    "db",
    "rw",
    "ro",
    "plain",
    "plaintext",
    "encoded",
    "b64",
    "base64",
    "hex",
    "secret",
    "password",
    "passwd",
    "pass",
    "pwd",
    "token",
    "passphrase",
    "credential",
    "credentials",
];

/// Whether the qualifier after the secret's word in a name (`_PROD_2`) holds only words of [`QUALIFIER_WORDS`]
/// and numbers.
pub(crate) fn qualifies(suffix: &[u8]) -> bool {
    suffix
        .split(|byte| matches!(byte, b'_' | b'-'))
        .filter(|word| !word.is_empty())
        .all(|word| {
            word.iter().all(u8::is_ascii_digit)
                || QUALIFIER_WORDS
                    .iter()
                    .any(|qualifier| word.eq_ignore_ascii_case(qualifier.as_bytes()))
        })
}

/// A URL's port followed by its path, query or fragment (`8443/api`, `8080?x`): what the URL pattern takes for a
/// password when an `@` comes later in the path.
pub(crate) fn port_and_path(value: &[u8]) -> bool {
    let digits = value.iter().take_while(|byte| byte.is_ascii_digit()).count();
    digits > 0 && matches!(value.get(digits), Some(b'/' | b'?' | b'#'))
}

/// Words that mark a value as an example or a blank to fill in, lowercase.
pub(crate) const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "your",
    "placeholder",
    "xxxx",
    "dummy",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "replace",
    "insert",
    "sample",
    "here",
    "todo",
    "fixme",
    "****",
    "####",
    "....",
    "<",
    ">",
];

/// Whole values that are defaults or words, not secrets, lowercase.
const PLACEHOLDER_VALUES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "pass",
    "admin",
    "root",
    "user",
    "test",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "required",
    "optional",
    "string",
    "redacted",
    "hidden",
    "masked",
    "empty",
    "default",
];

/// A random string, as a provider's token is: letters and digits mixed, a long run without a separator, many
/// distinct characters, and no placeholder word (`ghp_xxxx…`, `sk-your-key-here-0000…`).
///
/// A placeholder word is looked for in the first `own` bytes only, the format's own length: a word glued after a
/// well-formed token (`ghp_<36>here`) does not make it an example. What is glued can only add to the mix, so the
/// rest of the test reads the whole value.
pub(crate) fn random(value: &[u8], own: usize, cases_mix: bool) -> bool {
    let letters = value.iter().any(u8::is_ascii_alphabetic);
    let digits = value.iter().any(u8::is_ascii_digit)
        || (cases_mix
            && value.iter().any(u8::is_ascii_uppercase)
            && value.iter().any(u8::is_ascii_lowercase));
    let longest_run = value
        .split(|byte| !byte.is_ascii_alphanumeric())
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    let mut seen = [false; 256];
    for byte in value {
        if let Some(slot) = seen.get_mut(usize::from(*byte)) {
            *slot = true;
        }
    }
    let distinct = seen.iter().filter(|seen| **seen).count();
    letters
        && digits
        && longest_run >= 12
        && distinct >= 8
        && !placeholder_word(value.get(..own).unwrap_or(value))
        && !typed_run(value)
}

/// The first bytes (at most 72) that the base64 `text` encodes, its line ends skipped.
pub(crate) fn base64_start(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(72);
    let (mut bits, mut held) = (0u32, 0u32);
    for &byte in text {
        let six = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'\r' | b'\n' => continue,
            _ => break,
        };
        bits = (bits << 6) | u32::from(six);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push(u8::try_from((bits >> held) & 0xff).unwrap_or(0));
        }
        if out.len() >= 72 {
            break;
        }
    }
    out
}

/// Whether `text` starts with a PEM private key's begin line: `-----BEGIN`, a label that ends in `PRIVATE KEY`
/// (`RSA`, `EC`, `OPENSSH`, `ENCRYPTED` or none before it), then `-----`.
pub(crate) fn begins_private_key(text: &[u8]) -> bool {
    let Some(label) = text.strip_prefix(b"-----BEGIN ") else {
        return false;
    };
    let line = label.split(|&byte| byte == b'\n').next().unwrap_or_default();
    contains(line, b"PRIVATE KEY") && contains(line, b"-----")
}

/// Whether `value` holds six letters or digits in a row in their order, up or down, whatever their case
/// (`abcdef`, `lMnopq`, `123456`, `zyxwvu`): a run typed to fill a sample's length, which a random source draws
/// once in many millions of strings (`sk_live_abcdefghijklmnopqrstuvwxyz`, `AIzaSyabcdefghijklmnop…`). Unlike a
/// placeholder word, it is looked for in the whole value: a token's own characters do not run so, and a sample
/// whose own length is well-formed goes on with more of its run.
fn typed_run(value: &[u8]) -> bool {
    let (mut up, mut down) = (1, 1);
    for pair in value.windows(2) {
        let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
        let same_class =
            (a.is_ascii_lowercase() && b.is_ascii_lowercase()) || (a.is_ascii_digit() && b.is_ascii_digit());
        up = if same_class && a.checked_add(1) == Some(b) {
            up + 1
        } else {
            1
        };
        down = if same_class && b.checked_add(1) == Some(a) {
            down + 1
        } else {
            1
        };
        if up >= 6 || down >= 6 {
            return true;
        }
    }
    false
}

/// A value someone wrote in, at least `min_len` bytes long: not a placeholder (`changeme`, `xxx`, `<your-key>`,
/// `***`), not a reference to where the value is kept (`${VAR}`, `$VAR`, `{{ var }}`, `%(var)s`, a path, a URL),
/// and not an expression of code (`get_token()`, `self.password`, `user_password`, a number).
/// The text that starts `value`: up to its first control byte other than a tab. A value someone wrote in text ends
/// there; in a binary file (compiled bytecode, a database page) what follows a name and its `:` or `=` is other
/// data glued to it, which would pass for a value by its length (Python's bytecode of `ask_password("Password: ")`
/// holds `Password: ` and then the bytes of the next constant).
pub(crate) fn text_part(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|&byte| (byte < 0x20 && byte != b'\t') || byte == 0x7f)
        .unwrap_or(value.len());
    value.get(..end).unwrap_or(value)
}

pub(crate) fn written_in(value: &[u8], min_len: usize) -> bool {
    let Ok(text) = std::str::from_utf8(value) else {
        return value.len() >= min_len;
    };
    let lower = text.to_ascii_lowercase();
    let reference = variable(text)
        || text.starts_with("%(")
        || text.starts_with("%{")
        || windows_variable(text)
        || text.starts_with('/')
        || text.starts_with("./")
        || text.starts_with("~/")
        || text.contains("${")
        || text.contains("$(")
        || text.contains("{{")
        || text.contains("://")
        || (lower.starts_with("env") && !lower.as_bytes().get(3).is_some_and(u8::is_ascii_alphanumeric))
        || after_non_word(&lower, "env.")
        || lower.contains("environ")
        || lower.contains("getenv")
        || after_non_word(&lower, "secrets.");
    let expression = call(text)
        || text.contains("::")
        || text.starts_with(':')
        || text.contains('[')
        || text.contains('{')
        || text.ends_with(':')
        || text.bytes().all(|byte| byte.is_ascii_digit() || byte == b'.')
        || identifier_path(text);
    let blank = text
        .bytes()
        .all(|byte| matches!(byte, b'*' | b'x' | b'X' | b'.' | b'-' | b'_' | b'#' | b'?' | b'0'))
        || lower
            .split(['/', '|'])
            .all(|part| PLACEHOLDER_VALUES.contains(&part));
    text.len() >= min_len
        && !reference
        && !expression
        && !blank
        && !PLACEHOLDER_VALUES.contains(&lower.as_str())
        && !placeholder_word(value)
        && (!text.contains(char::is_whitespace) || passphrase(&lower))
}

/// Whether `word` starts `text` or follows a byte that is not a letter or digit in it (`process.env.X`,
/// `secrets.X`), not inside a longer word, joined by `-` or `_` too (`Xk9p-secrets.abc` is a value).
fn after_non_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        at == 0
            || text
                .as_bytes()
                .get(at - 1)
                .is_some_and(|byte| !byte.is_ascii_alphanumeric() && !matches!(byte, b'-' | b'_'))
    })
}

/// A variable of the Windows environment named, as `cmd`, MSBuild and NuGet's configuration expand it:
/// `%NAME%`.
fn windows_variable(text: &str) -> bool {
    text.strip_prefix('%')
        .and_then(|rest| rest.strip_suffix('%'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        })
}

/// A variable's value named (`$NAME`, `$db_password`, `$dbPassword`): a `$` and a name in one case, or in mixed
/// case without digits. A `$` before a mix of both cases and digits (`$Xk9pQ2mZ`) is the start of a value.
fn variable(text: &str) -> bool {
    text.strip_prefix('$').is_some_and(name_first)
}

/// Whether `text` starts with a name: the letters, digits and `_` it starts with are in one case, or in mixed
/// case without digits; a mix of both cases and digits is a random string's.
fn name_first(text: &str) -> bool {
    let name: &str = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default();
    let lower = name.bytes().any(|byte| byte.is_ascii_lowercase());
    let upper = name.bytes().any(|byte| byte.is_ascii_uppercase());
    let digit = name.bytes().any(|byte| byte.is_ascii_digit());
    !(lower && upper && digit)
}

/// A call (`get_token()`, `getpass.getpass()`) or a parenthesized expression: a `(` after a name, a value that a
/// `)` closes, or a `(` before a name (a cast, `(PasswordData *)x`). A `(` before what a name is not (`(Xk9p…`,
/// both cases and digits) is a character of the value.
fn call(text: &str) -> bool {
    let bytes = text.as_bytes();
    let after_name = bytes.windows(2).any(|pair| {
        pair.get(1) == Some(&b'(')
            && pair
                .first()
                .is_some_and(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'!'))
    });
    let opened = text
        .strip_prefix('(')
        .is_some_and(|rest| rest.ends_with(')') || name_first(rest));
    after_name || opened
}

/// A quoted value with spaces that is a passphrase (`correct horse battery staple`), not a sentence about one:
/// a few words, none of them a word of the secret's name.
fn passphrase(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    words.len() <= 5
        && !words.iter().any(|word| {
            ["password", "passphrase", "secret", "token", "key", "enter", "the"]
                .iter()
                .any(|name| word.contains(name))
        })
}

/// A name or a dotted path of names in one case (`user_password`, `self.token`, `DB_PASSWORD`, `config.api_key`,
/// `app-secrets`):
/// code naming where a secret is, not the secret.
fn identifier_path(text: &str) -> bool {
    let lowercase = text
        .bytes()
        .all(|byte| byte.is_ascii_lowercase() || matches!(byte, b'_' | b'.' | b'-'));
    let uppercase = text
        .bytes()
        .all(|byte| byte.is_ascii_uppercase() || matches!(byte, b'_' | b'.'));
    let camel_path = text.contains('.')
        && text.split('.').all(|part| {
            part.bytes()
                .all(|byte| byte.is_ascii_alphabetic() || byte == b'_')
                && !part.is_empty()
        });
    // Letters alone in any case, words joined by `_` or by a capital, one of which is a secret's own word
    // (`NextToken`, `nextPageToken`, `StateCredentials`, `next_token`, with the brackets of a call or a mapping it
    // closes): the name of a field or a variable that holds a secret, not the secret. A passphrase or a random
    // string of letters (`CorrectHorseBatteryStaple`, `qWeRtYuIoP…`) names none and stays a value.
    let name = text.trim_end_matches([')', ']', '}']);
    let camel_name = !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphabetic() || byte == b'_')
        && names_a_secret(name);
    lowercase || uppercase || camel_path || camel_name
}

/// The words a secret's field is named by, as words of a name ([`names_a_secret`]).
const SECRET_WORDS: [&str; 10] = [
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "passwd",
    "credential",
    "credentials",
    "key",
    "keys",
];

/// Whether one of the words of `name`, written in snake or camel case, is one of [`SECRET_WORDS`]: the name is
/// split at `_` and before a capital that follows a small letter (`nextPageToken` is `next`, `Page`, `Token`).
pub(crate) fn names_a_secret(name: &str) -> bool {
    let is_secret = |word: &[u8]| {
        SECRET_WORDS
            .iter()
            .any(|secret| word.eq_ignore_ascii_case(secret.as_bytes()))
    };
    name.split('_').any(|part| {
        let bytes = part.as_bytes();
        let mut start = 0;
        for at in 1..bytes.len() {
            let capital_after_small = bytes.get(at).is_some_and(u8::is_ascii_uppercase)
                && bytes.get(at - 1).is_some_and(u8::is_ascii_lowercase);
            if capital_after_small {
                if bytes.get(start..at).is_some_and(is_secret) {
                    return true;
                }
                start = at;
            }
        }
        bytes.get(start..).is_some_and(is_secret)
    })
}

fn placeholder_word(value: &[u8]) -> bool {
    let lower = value.to_ascii_lowercase();
    PLACEHOLDER_WORDS
        .iter()
        .any(|word| contains(&lower, word.as_bytes()))
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}
