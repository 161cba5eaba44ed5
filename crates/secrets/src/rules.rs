//! The table of credential formats: a kind's name, the pattern that finds it and the check its match must pass.
//!
//! The table is written by hand. The crates published for secret detection when it was written were young
//! single-author releases (0.1 versions), command-line tools with a library on the side, or pulled in large
//! dependency trees for a job that here is a few dozen lines over `regex`; none was maintained well enough to
//! take a security boundary's rules from. The formats follow the providers' documentation.

/// A name holding a secret's word, with a qualifier after it or not (the group `suffix`).
macro_rules! secret_name {
    () => {
        r#"(?i:(?:password|passwd|passphrase|(?:\b|_)pass|(?:\b|_)pwd|secret_?(?:access_?)?key|secret|api[_-]?key|access_?key|auth_?token|access_?token|private_?key|(?:signing|master|hmac)_?key|token|credentials?)(?P<suffix>(?:[_-][A-Za-z0-9]+){0,3}))"#
    };
}

/// The head of a secret's assignment, up to its value: a [`secret_name`], quoted or not, as a subscript's key or
/// not (`['PASSWORD']`, `ENV["API_TOKEN"]`), with a string type declared after it or not (Go's `var token string
/// =`, Python's `token: str =`, TypeScript's and Kotlin's `: string =`, `: String =`, Rust's `: &str =`), then the
/// assignment's operator: `:=`, a Makefile's `::=`, `:::=` and `?=`, `??=`, `||=`, PHP's `.=`, `=>`, `:` or `=`
/// (the longer first, so that `:=` and `=>` are not taken for `:` or `=` before a value `=` or `>`). The
/// assignment rule goes on with the value; the redactor's idle flush keeps back a value that has begun after it
/// and may still be completing.
macro_rules! assignment_head {
    () => {
        concat!(
            crate::rules::secret_name!(),
            r#"["']?\]?(?:[ \t]*:[ \t]*(?:&(?:'static[ \t]+)?str|str|string|String|SecretStr|\[\]byte|bytes)|[ \t]+(?:string|String|\[\]byte))?"#,
            r#"[ \t]*(?::{1,3}=|\?\??=|\|\|=|\.=|=>|:|=)[ \t]*"#
        )
    };
}
/// A file's name before a line, as `grep -r` prints it (`keys/id_ed25519:`), with the line's number after it as
/// `grep -rn` prints it (`keys/id:12:`): bytes without a blank or a colon, then a colon.
macro_rules! line_prefix {
    () => {
        r"[^\s:]{1,255}:(?:[0-9]{1,9}:)?"
    };
}

/// The head of a secret's mapping whose value is on the lines after it: a [`secret_name`] that starts its line
/// (after a file's name as `grep -r` prints it, [`line_prefix`], the line's indentation, a list's `- ` or a JSON
/// object's `{`/`,`, and a name's own first words, `db_password`), quoted or not, then `:` and the end of the
/// line, or a YAML block scalar's indicator (`|`, `>-`, `|2`) before it; then blank lines, at most eight. The
/// group `indent` is the name's line's indentation, `block` the indicator.
macro_rules! next_line_head {
    () => {
        concat!(
            r#"(?m:^)(?:"#,
            crate::rules::line_prefix!(),
            r#")?(?P<indent>[ \t]*)(?:[-{\[,][ \t]*)?["']?[A-Za-z0-9_.-]{0,64}?"#,
            crate::rules::secret_name!(),
            r#"["']?[ \t]*:[ \t]*(?P<block>[|>][0-9+-]{0,2}[ \t]*)?\r?\n(?:[ \t]*\r?\n){0,8}"#
        )
    };
}
pub(crate) use {assignment_head, line_prefix, next_line_head, secret_name};

/// The names the assignment rules look for, as anchors.
const SECRET_NAME_ANCHORS: &[&str] = &[
    "pass",
    "pwd",
    "api-key",
    "secret",
    "apikey",
    "apiKey",
    "ApiKey",
    "api_key",
    "access_key",
    "accessKey",
    "accesskey",
    "private_key",
    "privatekey",
    "privateKey",
    "token",
    "credential",
    "signing",
    "master_key",
    "masterkey",
    "hmac",
];

/// The kind of a private key, in a block or its body alone: its region runs on past its anchor's line.
pub(crate) const PRIVATE_KEY: &str = "private key";

/// How an OpenSSH private key's body starts: `openssh-key-v1\0` in base64.
pub(crate) const OPENSSH_KEY_MAGIC: &str = "b3BlbnNzaC1rZXktdjE";

/// What a match must also satisfy to count as a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The match is the credential.
    Format,
    /// The match is a credential unless it is a documentation example (`…EXAMPLE`). The pattern's first group
    /// is what is glued after the key's own length: with some, the key must mix letters and digits, as an
    /// uppercase word that starts the same way does not.
    NotExample,
    /// The pattern's first group is a random string in its first bytes, as many as the format's own length (or
    /// its shortest, where the provider names no length): letters and digits mixed, not a run of one character,
    /// no placeholder word. What is glued after the format's length (`ghp_<36>Here`, `…TODO`) is redacted with
    /// it but does not decide: a placeholder word after a well-formed token does not make it an example.
    Random(usize),
    /// As [`Check::Random`], but letters of both cases mix as well as letters and digits do: for a format whose
    /// own length is short enough that a random one often holds no digit.
    RandomLetters(usize),
    /// The pattern's first group is a value someone wrote in: not a placeholder, a reference or an expression.
    /// A group named `suffix` is not the value but what follows the secret's word in its name
    /// (`DATABASE_PASSWORD_PROD`, `SECRET_KEY_BASE`): it must say which secret it is (a stage, a number, `KEY`,
    /// `BASE`), not name something else (`_LENGTH`, `_FILE`, `token_start`).
    Value,
    /// The pattern's first group is the password of a URL: not a placeholder or a reference.
    UrlPassword,
    /// A mapping's value on the line after its name ([`next_line_head`]): the group `inner` is that line's
    /// indentation, and `dq`, `sq` or `bare` its value, which must pass as [`Check::Value`]'s does. A YAML
    /// block scalar's content (`block`) and a plain value on the next line must be indented further than the
    /// name, as YAML has it; a plain value must not be a mapping or a list itself (`type: string`, `- a`). A
    /// quoted value after the name's line alone is JSON's, at any indentation.
    NextLine,
}

/// One credential format.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The kind's name, as a redaction marker and a reason show it.
    pub(crate) kind: &'static str,
    /// Literals one of which every match contains: a provider's prefix as written (`ghp_`, `AKIA`), a lowercase
    /// name also in uppercase and capitalized (`token`, `TOKEN`, `Token`; a camel-case name such as `apiKey` is an
    /// anchor of its own). The scanner looks at a line only when it holds an anchor of some rule, so a text
    /// without any is read once, at the speed of a literal search.
    pub(crate) anchors: &'static [&'static str],
    /// The pattern, for `regex::bytes` without Unicode (ASCII classes, `.` any byte). A match lies within one
    /// line, but for a private-key block, which runs from its anchor's line to its end line.
    pub(crate) pattern: &'static str,
    /// What its match must also satisfy.
    pub(crate) check: Check,
}

/// Every credential format, most specific first: where two matches start at the same byte, the earlier rule's
/// kind names it (`sk-ant-…` is Anthropic's before it is anyone's `sk-…`).
pub(crate) const RULES: &[Rule] = &[
    Rule {
        kind: PRIVATE_KEY,
        anchors: &["-----BEGIN"],
        // Each line of the block may start with a file's name (`keys/id_ed25519:`, `keys/id:12:`), as `grep -r`
        // and `grep -rn` print it: the prefix is taken first, so that a name with bytes no key holds (`_`) does
        // not end the block. A block inside a JSON or other quoted string (a cloud service account's key file,
        // `vault … -format=json`) has its line ends escaped (`\n`, in a string written into another `\\n`): the
        // body runs on over them.
        pattern: concat!(
            r"-----BEGIN[A-Z0-9 ]{0,20} PRIVATE KEY(?: BLOCK)?-----(?:\n",
            line_prefix!(),
            r"|[A-Za-z0-9+/=\s:,.]|-[A-Za-z0-9]|\\{1,2}[nr])*(?:-----END[A-Z0-9 ]{0,20} PRIVATE KEY(?: BLOCK)?-----)?"
        ),
        check: Check::Format,
    },
    // An OpenSSH private key's body, recognised by its magic (`openssh-key-v1\0` in base64, how the body's first
    // line starts) when its `-----BEGIN` line is missing (left out by a filter, or altered): the line and the
    // whole base64 lines that follow it, up to its end line.
    Rule {
        kind: PRIVATE_KEY,
        anchors: &[OPENSSH_KEY_MAGIC],
        pattern: concat!(
            r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]*(?:\r?\n(?:",
            line_prefix!(),
            r")?[A-Za-z0-9+/=]+\r?(?m:$))*(?:\r?\n(?:",
            line_prefix!(),
            r")?-----END OPENSSH PRIVATE KEY-----)?"
        ),
        check: Check::Format,
    },
    Rule {
        kind: "AWS access key",
        anchors: &["AKIA", "ASIA", "ABIA", "ACCA"],
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}([A-Za-z0-9]*)",
        check: Check::NotExample,
    },
    Rule {
        kind: "AWS secret key",
        anchors: &["secret"],
        pattern: r#"(?i:aws_?secret_?(?:access_?)?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40,})"#,
        check: Check::Random(40),
    },
    // A provider's own prefix marks a credential wherever it starts: no word boundary is asked for before it, so
    // that text glued in front (`AAAghp_…`, an edit that replaced what stood before) does not hide it.
    Rule {
        kind: "GitHub token",
        anchors: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: r"gh[pousr]_([A-Za-z0-9]{36,})",
        check: Check::Random(36),
    },
    Rule {
        kind: "GitHub token",
        anchors: &["github_pat_"],
        pattern: r"github_pat_([A-Za-z0-9_]{50,})",
        check: Check::Random(82),
    },
    Rule {
        kind: "Anthropic key",
        anchors: &["sk-ant-"],
        pattern: r"sk-ant-(?:[a-z]{2,8}[0-9]{2}-)?([A-Za-z0-9_-]{32,})",
        check: Check::Random(32),
    },
    Rule {
        kind: "Stripe key",
        anchors: &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        pattern: r"(?:sk|rk)_(?:live|test)_([A-Za-z0-9]{20,})",
        check: Check::Random(20),
    },
    Rule {
        kind: "OpenAI key",
        anchors: &["sk-"],
        pattern: r"\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})",
        check: Check::Random(20),
    },
    Rule {
        kind: "Slack token",
        anchors: &["xox"],
        pattern: r"xox[abposer]-((?:[0-9A-Za-z]+-){1,4}[0-9A-Za-z]{6,})",
        // A bot token's length after its prefix (two numbers of 12 or 13 digits and 24 characters).
        check: Check::Random(50),
    },
    Rule {
        kind: "Slack webhook",
        anchors: &["hooks.slack.com"],
        pattern: r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}",
        check: Check::Format,
    },
    Rule {
        kind: "Google API key",
        anchors: &["AIza"],
        pattern: r"AIza([0-9A-Za-z_-]{35})",
        check: Check::Random(35),
    },
    Rule {
        kind: "GitLab token",
        anchors: &["glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"],
        pattern: r"gl(?:pat|dt|rt|ptt|cbt)-([0-9A-Za-z_-]{20,})",
        // Twenty random base64url characters hold no digit one time in sixty: both cases of letters mix too.
        check: Check::RandomLetters(20),
    },
    Rule {
        kind: "npm token",
        anchors: &["npm_"],
        pattern: r"npm_([A-Za-z0-9]{36,})",
        check: Check::Random(36),
    },
    Rule {
        kind: "PyPI token",
        anchors: &["pypi-"],
        pattern: r"pypi-AgE[A-Za-z0-9_-]{50,}",
        check: Check::Format,
    },
    // An age identity (the private key of the `age` encryption tool): Bech32 upper case after its prefix.
    Rule {
        kind: "age secret key",
        anchors: &["AGE-SECRET-KEY-1"],
        pattern: r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}",
        check: Check::Format,
    },
    Rule {
        kind: "JSON web token",
        anchors: &["eyJ"],
        pattern: r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.([A-Za-z0-9_-]{16,})",
        check: Check::Format,
    },
    Rule {
        kind: "URL with a password",
        anchors: &["://"],
        // The password runs to the last `@` of the URL: a password with `@` or `/` written in unescaped is taken
        // whole, not cut at its first `@` or `/` (a port and a path before an `@` are not one: see the check).
        // The scheme may start after any byte: text glued in front (`0000postgres://…`) does not hide the
        // password, which is what the finding names.
        pattern: r#"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/:@'"<>]{1,128}:([^\s'"<>]{1,256})@[A-Za-z0-9_.\[\]-]+"#,
        check: Check::UrlPassword,
    },
    Rule {
        kind: "authorization header",
        anchors: &["authorization"],
        pattern: r#"(?i:authorization["']?\s*[:=]\s*["']?(?:bearer|token|basic)\s+)([A-Za-z0-9._~+/=-]{16,})"#,
        check: Check::Value,
    },
    // A netrc entry names its password after a space, not `=`: `machine HOST login USER password VALUE`.
    Rule {
        kind: "password or secret assignment",
        anchors: &["pass"],
        pattern: r#"(?i:\b(?:machine[ \t]+\S+|default)\b[^\n]*?[ \t]password)[ \t]+["']?([^\s"']{1,512})"#,
        check: Check::Value,
    },
    // A password given to a command: `curl -u USER:PASSWORD`, `mysql -pPASSWORD`, `--password VALUE`.
    Rule {
        kind: "password or secret assignment",
        anchors: &["curl"],
        pattern: r#"\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)['"]?[^\s:'"]{1,128}:([^\s'"]{1,256})"#,
        check: Check::UrlPassword,
    },
    Rule {
        kind: "password or secret assignment",
        anchors: &["mysql"],
        pattern: r#"\bmysql(?:dump|admin|import|check|show)?\b[^\n]*?[ \t]-p([^\s'"-][^\s'"]{0,255})"#,
        check: Check::UrlPassword,
    },
    Rule {
        kind: "password or secret assignment",
        anchors: &["sshpass"],
        pattern: r#"\bsshpass\b[^\n]*?[ \t]-p[ \t]*['"]?([^\s'"-][^\s'"]{0,255})"#,
        check: Check::UrlPassword,
    },
    Rule {
        kind: "password or secret assignment",
        anchors: &["pass"],
        pattern: r#"(?:^|[ \t])--?(?i:password|passwd|pass)[ \t]+['"]?([^\s'"]{1,256})"#,
        check: Check::Value,
    },
    // A name holding the secret's word, with a qualifier after it or not (`DB_PASS`, `PASSWORD_2`,
    // `SECRET_KEY_BASE`, `x-api-key`; the short `pass` and `pwd` start the name or a word of it, so that `bypass`
    // and `.pgpass` are not one), then an assignment's operator ([`assignment_head`]), then the value: quoted
    // (`"`, `'` or a backtick), it runs to its closing quote, spaces included (a passphrase); bare, to a space or
    // a separator.
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            assignment_head!(),
            r#"(?:"([^"\n]{1,256})"|'([^'\n]{1,256})'|`([^`\n]{1,256})`|["']?([^\s"',;`]{1,512}))"#
        ),
        check: Check::Value,
    },
    // A mapping whose value is on the next line: a YAML block scalar (`password: |`, `token: >-` and the indented
    // lines after it; the first is the value), a YAML plain value continued on the next line, and JSON that puts
    // the value on the line after its name (`"password":` then `"…"`).
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            next_line_head!(),
            r#"(?:"#,
            line_prefix!(),
            r#")?(?P<inner>[ \t]*)(?:"(?P<dq>[^"\n]{1,256})"[ \t]*[,}]?|'(?P<sq>[^'\n]{1,256})'[ \t]*,?|(?P<bare>[^\s][^\n]{0,511}?))[ \t]*\r?(?m:$)"#
        ),
        check: Check::NextLine,
    },
    // A call that is given a secret's name and its value as its first two quoted arguments: PHP's constant
    // (`define('DB_PASSWORD', 'X');`, as wp-config.php has it), a property or a variable of the environment set
    // (`System.setProperty("API_TOKEN", "X")`, `os.environ.setdefault('SECRET_KEY', 'X')`, `setenv("TOKEN", "X")`),
    // a setting put in a map (`config.put("password", "X")`).
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            r#"\([ \t]*["'][A-Za-z0-9_.-]{0,40}?"#,
            secret_name!(),
            r#"["'][ \t]*,[ \t]*(?:"([^"\n]{1,256})"|'([^'\n]{1,256})')"#
        ),
        check: Check::Value,
    },
    // WordPress's keys and salts (`define('AUTH_KEY', '…')`, `define('NONCE_SALT', '…')`): long random values under
    // names the secret's words above do not cover.
    Rule {
        kind: "password or secret assignment",
        anchors: &["define"],
        pattern: r#"\bdefine[ \t]*\([ \t]*["'](?:[A-Z0-9]+_)*(?:KEY|SALT)["'][ \t]*,[ \t]*["']([^\s"']{20,256})["']"#,
        check: Check::Value,
    },
    // An XML element named as a secret (`<password>X</password>`, `<apiKey>`, `<db.password>`), its value up to
    // the next tag: an empty element (`<password/>`) has none.
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            r#"<[A-Za-z0-9_.:-]{0,40}?"#,
            secret_name!(),
            r#"(?:[ \t][^<>\n]{0,256})?>[ \t]*([^<\n]{1,256}?)[ \t]*</"#
        ),
        check: Check::Value,
    },
];
