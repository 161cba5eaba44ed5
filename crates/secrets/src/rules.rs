//! The table of credential formats: a kind's name, the pattern that finds it and the check its match must pass.
//!
//! The table is written by hand. The crates published for secret detection when it was written were young
//! single-author releases (0.1 versions), command-line tools with a library on the side, or pulled in large
//! dependency trees for a job that here is a few dozen lines over `regex`; none was maintained well enough to
//! take a security boundary's rules from. The formats follow the providers' documentation.

/// A name holding a secret's word, its words joined by `_`, `-` or nothing (`private_key`, `private-key`,
/// `privateKey`), with a qualifier after it or not (the group `suffix`): a number glued to it (`token1`,
/// `password2`), words after `_` or `-`.
macro_rules! secret_name {
    () => {
        r#"(?i:(?:password|passwd|passphrase|(?:\b|_)pass|(?:\b|_)pwd|(?:\b|_)creds|secret[_-]?(?:access[_-]?)?key|secret|api[_-]?key|access[_-]?key|auth[_-]?token|access[_-]?token|private[_-]?key|(?:signing|master|hmac)[_-]?key|token|credentials?)(?P<suffix>[0-9]{0,3}(?:[_-][A-Za-z0-9]+){0,3}))"#
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
/// The head of an XML element named as a secret whose value is on the lines after its start tag
/// (`<password>`, then the value indented on the next line): the start tag ends its line (after a file's name as
/// `grep -r` prints it, [`line_prefix`], and the line's indentation, the group `indent`), then blank lines, at
/// most eight.
macro_rules! xml_next_line_head {
    () => {
        concat!(
            r#"(?m:^)(?:"#,
            crate::rules::line_prefix!(),
            r#")?(?P<indent>[ \t]*)<[A-Za-z0-9_.:-]{0,40}?"#,
            crate::rules::secret_name!(),
            r#"(?:[ \t][^<>\n]{0,256})?>[ \t]*\r?\n(?:[ \t]*\r?\n){0,8}"#
        )
    };
}
pub(crate) use {assignment_head, line_prefix, next_line_head, secret_name, xml_next_line_head};

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
    "access-key",
    "accessKey",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "privateKey",
    "token",
    "credential",
    "creds",
    "signing",
    "master_key",
    "masterkey",
    "hmac",
];

/// The kind of a private key, in a block or its body alone: its region runs on past its anchor's line.
pub(crate) const PRIVATE_KEY: &str = "private key";

/// How an OpenSSH private key's body starts: `openssh-key-v1\0` in base64.
pub(crate) const OPENSSH_KEY_MAGIC: &str = "b3BlbnNzaC1rZXktdjE";

/// The kind of a PEM private key written in base64 (a Kubernetes TLS Secret's `tls.key`, a key in an
/// environment variable): its region, as a block's, runs on past its anchor's line, over wrapped lines.
pub(crate) const PRIVATE_KEY_BASE64: &str = "private key in base64";

/// How a PEM block starts in base64: `-----BEGIN` and the space after it.
pub(crate) const BASE64_PEM_MAGIC: &str = "LS0tLS1CRUdJTi";

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
    /// The match is base64 whose text is a PEM private key's begin line (`-----BEGIN … PRIVATE KEY-----`), not a
    /// certificate's or a public key's.
    Base64PrivateKey,
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
        anchors: &["_live_", "_test_", "_prod_", "whsec_"],
        pattern: r"(?:(?:sk|rk)_(?:live|test|prod)_|whsec_)([A-Za-z0-9]{20,})",
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
        pattern: r"xox[abposer]-((?:[0-9A-Za-z]+-){0,4}[0-9A-Za-z]{6,})",
        // A bot token's length after its prefix (two numbers of 12 or 13 digits and 24 characters).
        check: Check::Random(50),
    },
    Rule {
        kind: "Slack token",
        anchors: &["xapp-"],
        pattern: r"xapp-[0-9]-([A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]{20,})",
        check: Check::Random(64),
    },
    Rule {
        kind: "Slack webhook",
        anchors: &["hooks.slack.com"],
        // An incoming webhook (`services/T…/B…/…`), a workflow's (`workflows/`) or a trigger's (`triggers/`).
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{24,})",
        check: Check::Random(64),
    },
    Rule {
        kind: "Google API key",
        anchors: &["AIza"],
        pattern: r"AIza([0-9A-Za-z_-]{35})",
        check: Check::Random(35),
    },
    Rule {
        kind: "GitLab token",
        anchors: &[
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glcbt-",
            "glft-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "glagent-",
            "gloas-",
            "GR1348941",
        ],
        // A personal, deploy, runner, pipeline trigger, CI/CD job, feed, SCIM, feature flag client, incoming mail,
        // Kubernetes agent or OAuth application secret token, or a runner registration token (`GR1348941`); a
        // routable token ends in `.` and nine characters.
        pattern: r"(?:gl(?:pat|dt|rt|ptt|cbt|ft|soat|ffct|imt|agent|oas)-|GR1348941)([0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{9})?)",
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
    // A PEM private key in base64, on one line or wrapped as `base64` writes it (76 characters a line).
    Rule {
        kind: PRIVATE_KEY_BASE64,
        anchors: &[BASE64_PEM_MAGIC],
        pattern: r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}(?:\r?\n[A-Za-z0-9+/]{2,}={0,2}\r?(?m:$))*={0,2}",
        check: Check::Base64PrivateKey,
    },
    Rule {
        kind: "age secret key",
        anchors: &["AGE-SECRET-KEY-1"],
        pattern: r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}",
        check: Check::Format,
    },
    // More providers' tokens, each recognised by its documented prefix and the length and alphabet of what follows.
    Rule {
        kind: "DigitalOcean token",
        anchors: &["_v1_"],
        pattern: r"do[opr]_v1_([a-f0-9]{64})\b",
        check: Check::Random(64),
    },
    Rule {
        kind: "Shopify token",
        anchors: &["shp"],
        pattern: r"shp(?:at|ca|pa|ss)_([a-fA-F0-9]{32})\b",
        check: Check::Random(32),
    },
    // Thirty-four letters, no digit: both cases must mix. A word glued after (`hf_…tokenizer`) is no token.
    Rule {
        kind: "Hugging Face token",
        anchors: &["hf_", "api_org_"],
        pattern: r"\b(?:hf|api_org)_([A-Za-z]{34})\b",
        check: Check::RandomLetters(34),
    },
    Rule {
        kind: "SendGrid key",
        anchors: &["SG."],
        pattern: r"SG\.([A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
        check: Check::Random(66),
    },
    Rule {
        kind: "Databricks token",
        anchors: &["dapi"],
        pattern: r"\bdapi([a-f0-9]{32})(?:-[0-9])?\b",
        check: Check::Random(32),
    },
    Rule {
        kind: "Doppler token",
        anchors: &["dp."],
        pattern: r"dp\.(?:pt|st|ct|sa|scim|audit)\.([A-Za-z0-9]{40,44})",
        check: Check::Random(40),
    },
    Rule {
        kind: "Dynatrace token",
        anchors: &["dt0c01."],
        pattern: r"dt0c01\.([A-Za-z0-9]{24}\.[A-Za-z0-9]{64})",
        check: Check::Random(89),
    },
    Rule {
        kind: "Linear key",
        anchors: &["lin_"],
        pattern: r"lin_(?:api|oauth)_([A-Za-z0-9]{40,64})",
        check: Check::Random(40),
    },
    Rule {
        kind: "Postman key",
        anchors: &["PMAK-"],
        pattern: r"PMAK-([a-fA-F0-9]{24}-[a-fA-F0-9]{34})\b",
        check: Check::Random(59),
    },
    Rule {
        kind: "Pulumi token",
        anchors: &["pul-"],
        pattern: r"\bpul-([a-f0-9]{40})\b",
        check: Check::Random(40),
    },
    Rule {
        kind: "PlanetScale token",
        anchors: &["pscale_"],
        pattern: r"pscale_(?:tkn|pw|oauth)_([A-Za-z0-9_=.-]{32,64})",
        check: Check::Random(32),
    },
    // A user's token (`sntryu_`, hexadecimal) and an organization's (`sntrys_`, base64 of its JSON, `_`, the key).
    Rule {
        kind: "Sentry token",
        anchors: &["sntry"],
        pattern: r"sntryu_([a-f0-9]{64})\b|sntrys_(eyJ[A-Za-z0-9+/=_]{60,})",
        check: Check::Random(64),
    },
    Rule {
        kind: "RubyGems key",
        anchors: &["rubygems_"],
        pattern: r"rubygems_([a-f0-9]{48})\b",
        check: Check::Random(48),
    },
    Rule {
        kind: "Vault token",
        anchors: &["hvs.", "hvb."],
        pattern: r"hv[sb]\.([A-Za-z0-9_-]{24,})",
        check: Check::Random(24),
    },
    Rule {
        kind: "Terraform Cloud token",
        anchors: &[".atlasv1."],
        pattern: r"[A-Za-z0-9]{14}\.atlasv1\.([A-Za-z0-9_=-]{60,70})",
        check: Check::Random(60),
    },
    // A Cloud token (`glc_`, base64 of its JSON), a service account's (`glsa_`), an API key (base64 of `{"k":"`).
    Rule {
        kind: "Grafana token",
        anchors: &["glc_", "glsa_", "eyJrIjoi"],
        pattern: r"(?:\bglc_|\bglsa_|eyJrIjoi)([A-Za-z0-9+/_]{32,400}={0,3})",
        check: Check::Random(32),
    },
    Rule {
        kind: "Heroku key",
        anchors: &["HRKU-AA"],
        pattern: r"HRKU-AA([A-Za-z0-9_-]{58})",
        check: Check::Random(58),
    },
    Rule {
        kind: "Alibaba Cloud access key",
        anchors: &["LTAI"],
        pattern: r"\bLTAI([A-Za-z0-9]{12,20})\b",
        check: Check::Random(12),
    },
    Rule {
        kind: "Artifactory token",
        anchors: &["AKCp", "cmVmd"],
        pattern: r"\b(?:AKCp([A-Za-z0-9]{69})|cmVmd([A-Za-z0-9]{59}))\b",
        check: Check::Random(59),
    },
    Rule {
        kind: "1Password token",
        anchors: &["ops_eyJ"],
        pattern: r"ops_(eyJ[A-Za-z0-9+/]{250,}={0,3})",
        check: Check::Random(64),
    },
    Rule {
        kind: "Atlassian token",
        anchors: &["ATATT3"],
        pattern: r"ATATT3([A-Za-z0-9_=-]{180,})",
        check: Check::Random(64),
    },
    // A Microsoft Entra ID (Azure AD) client secret: three characters, a digit, `Q~`, then 31 to 34 more.
    Rule {
        kind: "Azure client secret",
        anchors: &[
            "0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~",
        ],
        pattern: r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
        check: Check::Random(40),
    },
    Rule {
        kind: "Square token",
        anchors: &["sq0"],
        pattern: r"\bsq0(?:atp|csp)-([A-Za-z0-9_-]{22,60})",
        check: Check::Random(22),
    },
    Rule {
        kind: "Sourcegraph token",
        anchors: &["sgp_"],
        pattern: r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?([a-fA-F0-9]{40})\b",
        check: Check::Random(40),
    },
    Rule {
        kind: "Notion token",
        anchors: &["ntn_"],
        pattern: r"\bntn_([0-9]{11}[A-Za-z0-9]{35})\b",
        check: Check::Random(46),
    },
    Rule {
        kind: "Perplexity key",
        anchors: &["pplx-"],
        pattern: r"pplx-([A-Za-z0-9]{48})",
        check: Check::Random(48),
    },
    Rule {
        kind: "Prefect key",
        anchors: &["pnu_", "pnb_"],
        pattern: r"\bpn[ub]_([A-Za-z0-9]{36})\b",
        check: Check::Random(36),
    },
    Rule {
        kind: "Fly.io token",
        anchors: &["fo1_", "fm1", "fm2_"],
        pattern: r"\b(?:fo1|fm1[ar]|fm2)_([A-Za-z0-9_+/-]{43,}={0,3})",
        check: Check::Random(43),
    },
    Rule {
        kind: "ReadMe key",
        anchors: &["rdme_"],
        pattern: r"\brdme_([a-z0-9]{70})\b",
        check: Check::Random(70),
    },
    Rule {
        kind: "Scalingo token",
        anchors: &["tk-us-"],
        pattern: r"tk-us-([A-Za-z0-9_-]{48})",
        check: Check::Random(48),
    },
    Rule {
        kind: "Brevo key",
        anchors: &["sib-"],
        pattern: r"x(?:keysib|smtpsib)-([a-f0-9]{64}-[A-Za-z0-9]{16})",
        check: Check::Random(64),
    },
    Rule {
        kind: "Shippo token",
        anchors: &["shippo_"],
        pattern: r"shippo_(?:live|test)_([a-fA-F0-9]{40})\b",
        check: Check::Random(40),
    },
    Rule {
        kind: "Frame.io token",
        anchors: &["fio-u-"],
        pattern: r"fio-u-([A-Za-z0-9_=-]{64})",
        check: Check::Random(64),
    },
    Rule {
        kind: "Duffel token",
        anchors: &["duffel_"],
        pattern: r"duffel_(?:test|live)_([A-Za-z0-9_=-]{43})",
        check: Check::Random(43),
    },
    Rule {
        kind: "EasyPost key",
        anchors: &["EZAK", "EZTK"],
        pattern: r"\bEZ[AT]K([A-Za-z0-9]{54})\b",
        check: Check::Random(54),
    },
    Rule {
        kind: "Adobe client secret",
        anchors: &["p8e-"],
        pattern: r"\bp8e-([A-Za-z0-9]{32})\b",
        check: Check::Random(32),
    },
    Rule {
        kind: "Clojars token",
        anchors: &["CLOJARS_"],
        pattern: r"CLOJARS_([A-Za-z0-9]{60})",
        check: Check::Random(60),
    },
    Rule {
        kind: "SettleMint token",
        anchors: &["sm_"],
        pattern: r"\bsm_(?:pat|aat|sat)_([A-Za-z0-9]{16})\b",
        check: Check::Random(16),
    },
    Rule {
        kind: "OpenShift token",
        anchors: &["sha256~"],
        pattern: r"sha256~([A-Za-z0-9_-]{43})",
        check: Check::Random(43),
    },
    Rule {
        kind: "Amazon Bedrock key",
        anchors: &["ABSK", "bedrock-api-key-"],
        pattern: r"(?:ABSK([A-Za-z0-9+/]{109,269}={0,2})|bedrock-api-key-(YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]{20,}))",
        check: Check::Random(64),
    },
    Rule {
        kind: "42 client secret",
        anchors: &["s-s4t2"],
        pattern: r"s-s4t2(?:ud|af)-([a-f0-9]{64})\b",
        check: Check::Random(64),
    },
    Rule {
        kind: "Cloudflare key",
        anchors: &["v1.0-"],
        pattern: r"v1\.0-([a-f0-9]{24}-[a-f0-9]{146})",
        check: Check::Random(24),
    },
    Rule {
        kind: "Mailgun key",
        anchors: &["key-"],
        pattern: r"\bkey-([a-f0-9]{32})\b",
        check: Check::Random(32),
    },
    Rule {
        kind: "Mailchimp key",
        anchors: &["-us"],
        pattern: r"\b([a-f0-9]{32})-us[0-9]{1,2}\b",
        check: Check::Random(32),
    },
    // A Telegram bot's token: the bot's number, `:AA`, then 33 characters.
    Rule {
        kind: "Telegram bot token",
        anchors: &[":AA"],
        pattern: r"\b([0-9]{8,10}:AA[A-Za-z0-9_-]{33})\b",
        check: Check::Random(45),
    },
    Rule {
        kind: "Discord webhook",
        anchors: &["/api/webhooks/"],
        pattern: r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([A-Za-z0-9_-]{60,68})",
        check: Check::Random(60),
    },
    Rule {
        kind: "Microsoft Teams webhook",
        anchors: &[".webhook.office.com/webhookb2/"],
        pattern: r"[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9-]{36}@[A-Za-z0-9-]{36}/IncomingWebhook/([A-Za-z0-9]{32})/[A-Za-z0-9-]{36}",
        check: Check::Random(32),
    },
    Rule {
        kind: "Mapbox token",
        anchors: &["sk.eyJ"],
        pattern: r"sk\.(eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,})",
        check: Check::Random(64),
    },
    Rule {
        kind: "New Relic key",
        anchors: &["NRAK-", "NRII-"],
        pattern: r"NR(?:AK|II)-([A-Za-z0-9-]{27,32})",
        check: Check::Random(27),
    },
    Rule {
        kind: "Yandex key",
        anchors: &["AQVN"],
        pattern: r"\bAQVN([A-Za-z0-9_-]{35,38})",
        check: Check::Random(35),
    },
    Rule {
        kind: "Flutterwave key",
        anchors: &["FLWSECK"],
        pattern: r"FLWSECK(?:_TEST)?-([a-hA-H0-9]{12,32})(?:-X)?",
        check: Check::Random(12),
    },
    Rule {
        kind: "Harness token",
        anchors: &["pat.", "sat."],
        pattern: r"\b(?:pat|sat)\.([A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})\b",
        check: Check::Random(67),
    },
    Rule {
        kind: "Docker Hub token",
        anchors: &["dckr_"],
        pattern: r"dckr_(?:pat|oat)_([A-Za-z0-9_-]{27,})",
        check: Check::Random(27),
    },
    // A Google OAuth client's secret (`GOCSPX-`) and an OAuth access token (`ya29.`).
    Rule {
        kind: "Google OAuth secret",
        anchors: &["GOCSPX-", "ya29."],
        pattern: r"(?:GOCSPX-([A-Za-z0-9_-]{28})|\bya29\.([A-Za-z0-9_-]{30,}))",
        check: Check::Random(28),
    },
    Rule {
        kind: "Groq key",
        anchors: &["gsk_"],
        pattern: r"\bgsk_([A-Za-z0-9]{52})\b",
        check: Check::Random(52),
    },
    Rule {
        kind: "Supabase token",
        anchors: &["sbp_"],
        pattern: r"\bsbp_([a-f0-9]{40})\b",
        check: Check::Random(40),
    },
    Rule {
        kind: "Bitbucket app password",
        anchors: &["ATBB"],
        pattern: r"\bATBB([A-Za-z0-9_=.-]{28,})",
        check: Check::Random(28),
    },
    Rule {
        kind: "LangSmith key",
        anchors: &["lsv2_"],
        pattern: r"lsv2_(?:pt|sk)_([a-f0-9]{32}_[a-f0-9]{10})",
        check: Check::Random(32),
    },
    Rule {
        kind: "Pinecone key",
        anchors: &["pcsk_"],
        pattern: r"\bpcsk_([A-Za-z0-9_]{50,})",
        check: Check::Random(50),
    },
    Rule {
        kind: "xAI key",
        anchors: &["xai-"],
        pattern: r"\bxai-([A-Za-z0-9]{70,})",
        check: Check::Random(70),
    },
    Rule {
        kind: "Tavily key",
        anchors: &["tvly-"],
        pattern: r"\btvly-(?:dev-|prod-)?([A-Za-z0-9]{32})\b",
        check: Check::Random(32),
    },
    Rule {
        kind: "Replicate token",
        anchors: &["r8_"],
        pattern: r"\br8_([A-Za-z0-9]{37})\b",
        check: Check::Random(37),
    },
    Rule {
        kind: "Octopus Deploy key",
        anchors: &["API-"],
        pattern: r"\bAPI-([A-Z0-9]{26})\b",
        check: Check::Random(26),
    },
    Rule {
        kind: "Facebook token",
        anchors: &["EAAM", "EAAC"],
        pattern: r"\bEAA[MC]([A-Za-z0-9]{100,})",
        check: Check::Random(100),
    },
    // An Azure Storage account's key or a Service Bus, Event Hubs or IoT Hub shared access key, as a connection
    // string names it (`DefaultEndpointsProtocol=https;AccountName=x;AccountKey=…;`): 64 bytes or 32 in base64.
    Rule {
        kind: "Azure key",
        anchors: &["AccountKey=", "SharedAccessKey="],
        pattern: r"(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})",
        check: Check::Random(40),
    },
    // A JSON Web Key's private member (RFC 7518: `"d"`, the private exponent or the private key of an RSA, EC or
    // OKP key), base64url.
    Rule {
        kind: "JWK private key",
        anchors: &["\"d\""],
        pattern: r#""d"[ \t]*:[ \t]*"([A-Za-z0-9_-]{32,})""#,
        check: Check::Random(32),
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
        // The scheme is any word (`Bearer`, `Token`, `Basic`, `Api-Token`, `SSWS`, `Splunk`) or none: a key given
        // alone is the credential too. The value takes the brackets after it, so that code is seen as code
        // (`authorization = base64.decodebytes(authorization)`, `authorization: Property[str]`).
        pattern: r#"(?i:authorization["']?\s*[:=]\s*["']?(?:[A-Za-z][A-Za-z0-9_-]{0,20}\s+)?)([A-Za-z0-9._~+/=-]{16,}[(\[]?)"#,
        check: Check::Value,
    },
    // A netrc entry names its password after a space, not `=`: `machine HOST login USER password VALUE`.
    Rule {
        kind: "password or secret assignment",
        anchors: &["pass"],
        pattern: r#"(?i:\b(?:machine[ \t]+\S+|default)\b[^\n]*?[ \t]password)[ \t]+["']?([^\s"']{1,512})"#,
        check: Check::Value,
    },
    // Bundler's credentials for a gem source, in its environment (`BUNDLE_GEMS__EXAMPLE__COM=user:password`, the
    // host's dots written `__`).
    Rule {
        kind: "password or secret assignment",
        anchors: &["BUNDLE_"],
        pattern: r#"\bBUNDLE_[A-Z0-9_]*__[A-Z0-9_]+["']?[ \t]*[:=][ \t]*["']?([^\s"':]{1,128}:[^\s"';&]{1,256})"#,
        check: Check::Value,
    },
    // A password given to a command: `curl -u USER:PASSWORD`, `mysql -pPASSWORD`, `--password VALUE`.
    Rule {
        kind: "password or secret assignment",
        anchors: &["curl"],
        // The user and the password may each be quoted (`--user kevin:'X'`, `-u "ci":"X"`), and the user
        // empty (`-u :X`).
        pattern: r#"\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)['"]?[^\s:'"]{0,128}['"]?:['"]?([^\s'"]{1,256})"#,
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
        // `pass` is found in `sshpass`.
        anchors: &["pass"],
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
    // An XML element named as a secret with its value on the next line, indented further than the start tag
    // (`<password>`, then the value, then `</password>` on its line or after the value).
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            xml_next_line_head!(),
            r#"(?:"#,
            line_prefix!(),
            r#")?(?P<inner>[ \t]*)(?P<bare>[^<\s][^<\n]{0,511}?)[ \t]*(?:</[^<>\n]{1,64}>)?[ \t]*\r?(?m:$)"#
        ),
        check: Check::NextLine,
    },
    // A call that is given a secret's name and its value as its first two quoted arguments: PHP's constant
    // (`define('DB_PASSWORD', 'X');`, as wp-config.php has it), a property or a variable of the environment set
    // (`System.setProperty("API_TOKEN", "X")`, `os.environ.setdefault('SECRET_KEY', 'X')`, `setenv("TOKEN", "X")`),
    // a setting put in a map (`config.put("password", "X")`, `localStorage.setItem('token', 'X')`). Only a call
    // that stores: a log line or a message given the name and some text (`log.info('token', 'getting list')`)
    // holds no secret.
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            r#"\b(?i:define|set\w{0,30}|put\w{0,30}|add|insert|store|save)[ \t]*\([ \t]*["'][A-Za-z0-9_.-]{0,40}?"#,
            secret_name!(),
            r#"["'][ \t]*,[ \t]*(?:"([^"\n]{1,256})"|'([^'\n]{1,256})')"#
        ),
        check: Check::Value,
    },
    // A .NET configuration's setting (`<add key="ApiKey" value="X" />` in `appSettings`, a NuGet source's
    // `ClearTextPassword`): the name is the `key` attribute's, the value the `value` attribute's.
    Rule {
        kind: "password or secret assignment",
        anchors: SECRET_NAME_ANCHORS,
        pattern: concat!(
            r#"<add[ \t]+key[ \t]*=[ \t]*["'][A-Za-z0-9_.:-]{0,40}?"#,
            secret_name!(),
            r#"["'][ \t]+value[ \t]*=[ \t]*(?:"([^"\n]{1,256})"|'([^'\n]{1,256})')"#
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
