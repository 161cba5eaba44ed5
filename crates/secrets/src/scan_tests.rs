//! Tests of scan.rs.

use super::*;
use crate::value::{PLACEHOLDER_WORDS, names_a_secret};

/// The rules of each anchor, as compiled, are the rules with an anchor that holds it or that it holds
/// (compared in lower case), its own included.
#[test]
fn each_anchor_stands_for_the_rules_of_the_anchors_it_holds_or_is_held_by() {
    let compiled = compile().unwrap();
    let mut anchors: Vec<Vec<u8>> = RULES
        .iter()
        .flat_map(|rule| rule.anchors.iter())
        .map(|anchor| anchor.to_ascii_lowercase().into_bytes())
        .collect();
    anchors.sort_by_key(|anchor| (anchor.len() < SHORT, anchor.clone()));
    anchors.dedup();
    assert_eq!(compiled.rules_of.len(), anchors.len());
    let holds = |outer: &[u8], inner: &[u8]| outer.windows(inner.len()).any(|window| window == inner);
    for (anchor, compiled) in anchors.iter().zip(&compiled.rules_of) {
        let mut mask: RuleMask = 0;
        for (index, rule) in RULES.iter().enumerate() {
            if rule
                .anchors
                .iter()
                .map(|other| other.to_ascii_lowercase().into_bytes())
                .any(|other| holds(anchor, &other) || holds(&other, anchor))
            {
                mask |= 1 << index;
            }
        }
        assert_eq!(*compiled, mask, "{}", String::from_utf8_lossy(anchor));
    }
}

#[test]
fn every_rule_compiles() {
    let compiled = compile().unwrap();
    assert_eq!(compiled.each.len(), RULES.len());
    for (index, rule) in RULES.iter().enumerate() {
        expression(rule).unwrap_or_else(|e| panic!("{}: {e}", rule.kind));
        assert!(compiled.rule(index, rule).is_some());
    }
    // All of them together, as one automaton, within the size bound.
    regex::bytes::RegexSetBuilder::new(RULES.iter().map(|rule| rule.pattern))
        .unicode(false)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build()
        .unwrap();
    assert!(RULES.len() <= 128, "a rule mask is a u128");
    // Each literal search is a pass over the text: the anchors of four bytes or more fit in two, the short in one.
    assert!(
        compiled.searches.len() <= 3,
        "{} literal searches, from {:?}",
        compiled.searches.len(),
        compiled
            .searches
            .iter()
            .map(|search| search.anchors.iter().min().copied().unwrap_or(0))
            .collect::<Vec<_>>()
    );
    for rule in RULES {
        assert!(!rule.anchors.is_empty(), "{} has no anchor", rule.kind);
    }
}

fn kinds(text: &str) -> Vec<&'static str> {
    scan(text.as_bytes()).into_iter().map(|f| f.kind).collect()
}

#[test]
fn a_provider_prefixed_token_is_found_with_text_glued_in_front() {
    for (glued, kind) in [
        ("AAAghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7", "GitHub token"),
        ("x_sk-ant-api03-Qm7vT2pL9xK4nR8wZ1cJ6bH3yF5dG0sA", "Anthropic key"),
        ("0xoxb-5829301746-0918273645-Qm7TzKp2WxRb9LcVn4Hd", "Slack token"),
        ("keyAIzaSyD4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH", "Google API key"),
        (
            "url: 0000postgres://deploy:Xk9pQ2mZ7wLr4tYv@db.internal/app",
            "URL with a password",
        ),
        ("x_redis://app:Xk9pQ2mZ7wLr4tYv@cache", "URL with a password"),
    ] {
        assert!(kinds(glued).contains(&kind), "{glued}: {:?}", kinds(glued));
    }
}

#[test]
fn an_anchor_overlapping_the_end_of_another_still_calls_its_rules() {
    // Every pair of anchors where a suffix of one is a prefix of the other, glued that way in front of a
    // credential of the second's rule: the second's rule runs.
    for (glued, kind) in [
        (
            "tokenpm_Xk3pQ9vL2mR7tZ1wB5nC8yH4jF6dG0sA2eQu".to_owned(),
            "npm token",
        ),
        ("passk_live_hx4HIX508aNJjIBqmQfltxWd".to_owned(), "Stripe key"),
        (
            "accAIzaSyD4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH".to_owned(),
            "Google API key",
        ),
    ] {
        assert!(kinds(&glued).contains(&kind), "{glued}: {:?}", kinds(&glued));
    }
    // The class: for any two anchors that overlap, the anchors the search reports at each start include one
    // standing for the second's rules.
    let compiled = compile().unwrap();
    let mut anchors: Vec<&str> = RULES
        .iter()
        .flat_map(|rule| rule.anchors.iter().copied())
        .collect();
    anchors.sort_unstable();
    anchors.dedup();
    for a in &anchors {
        for b in &anchors {
            let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
            for overlap in 1..a.len().min(b.len()) {
                if a.as_bytes()[a.len() - overlap..] != b.as_bytes()[..overlap] {
                    continue;
                }
                let text = format!("{a}{}", &b[overlap..]);
                let start = a.len() - overlap;
                let own = RULES
                    .iter()
                    .enumerate()
                    .filter(|(_, rule)| rule.anchors.iter().any(|x| x.eq_ignore_ascii_case(&b)))
                    .fold(0, |mask: RuleMask, (index, _)| mask | 1 << index);
                let mut reached: RuleMask = 0;
                anchors_in(&compiled, text.as_bytes(), |anchor| {
                    if anchor.start == start {
                        reached |= compiled.rules_of.get(anchor.id).copied().unwrap_or(0);
                    }
                });
                assert_eq!(reached & own, own, "{text}: the rules of {b} are not called");
            }
        }
    }
}

#[test]
fn a_token_is_found_and_its_placeholder_is_not() {
    assert_eq!(
        kinds("export GH=ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7"),
        ["GitHub token"]
    );
    assert!(kinds("export GH=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").is_empty());
}

#[test]
fn a_placeholder_word_glued_after_a_token_does_not_hide_it() {
    // Each provider format with a random part, followed by each placeholder word: the token is still found,
    // and redacted with what is glued to it. A placeholder within the format's own length still is one.
    for (token, kind) in [
        ("ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7", "GitHub token"),
        (
            "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",
            "GitHub token",
        ),
        ("npm_Xk3pQ9vL2mR7tZ1wB5nC8yH4jF6dG0sA2eQu", "npm token"),
        ("sk_live_hx4HIX508aNJjIBqmQfltxWd", "Stripe key"),
        ("glpat-dzxTEkyvLCvkdOoQ3Pc3", "GitLab token"),
        ("sk-proj-Zq8vN2xL5pR7tK1mW9cB4yH6jF3dG0sA", "OpenAI key"),
        (
            "xoxb-395609409464-434225321734-98X9I6UysE7snTfp2vBFbE0m",
            "Slack token",
        ),
        ("AIzaSyD4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH", "Google API key"),
        ("AKIAYLNKMKFJSA45HBK7", "AWS access key"),
        (
            "aws_secret_access_key=4M+kGuPNjUeBORiNmFt/KIJzl+tsP9zq8HCFkrHO",
            "AWS secret key",
        ),
    ] {
        for word in PLACEHOLDER_WORDS
            .iter()
            .filter(|word| word.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            for glued in [word.to_string(), word.to_ascii_uppercase(), format!("{word}key")] {
                let text = format!("key: {token}{glued}");
                let found = scan(text.as_bytes());
                assert_eq!(found.iter().map(|f| f.kind).collect::<Vec<_>>(), [kind], "{text}");
                let redacted = String::from_utf8(redact_text(&text)).unwrap();
                assert!(!redacted.contains(&token[token.len() - 12..]), "{redacted}");
            }
        }
    }
    for placeholder in [
        "ghp_YourTokenHere0000000000000000000000000",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxHere",
        "npm_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxsample",
        "xoxb-your-token",
    ] {
        assert!(kinds(placeholder).is_empty(), "{placeholder}");
    }
}

fn redact_text(text: &str) -> Vec<u8> {
    crate::redact::redact(text.as_bytes()).into_owned()
}

#[test]
fn an_assignment_names_the_value_alone() {
    let text = "password: Tr0ub4dor&3xq";
    let finding = first(text.as_bytes()).unwrap();
    assert_eq!(&text[finding.start..finding.end], "Tr0ub4dor&3xq");
    for placeholder in [
        "changeme",
        "xxx",
        "<your-key>",
        "${DB_PASSWORD}",
        "***",
        "\"\"",
        "abc",
    ] {
        assert!(
            kinds(&format!("password: {placeholder}")).is_empty(),
            "{placeholder}"
        );
    }
}

/// The span of the one finding in `text`.
fn value(text: &str) -> &str {
    let found = scan(text.as_bytes());
    assert_eq!(found.len(), 1, "{text}: {found:?}");
    &text[found[0].start..found[0].end]
}

#[test]
fn a_name_with_a_qualifier_a_netrc_entry_and_a_command_name_their_password() {
    for (text, secret) in [
        ("DATABASE_PASSWORD_PROD=Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
        ("PASSWORD_2=Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
        ("SECRET_KEY_BASE=9f8e7d6c5b4a3928", "9f8e7d6c5b4a3928"),
        ("MYSQL_PWD=Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
        ("DB_PASS=Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
        ("x-api-key: 8f7d6c5b4a392817", "8f7d6c5b4a392817"),
        ("machine h login u password Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
        ("mysqldump --password Xk9pQ2mZ7wLr4tYv db", "Xk9pQ2mZ7wLr4tYv"),
        ("curl -s -u admin:Xk9p https://h/", "Xk9p"),
        ("curl --user=admin:Xk9p/2@ https://h/", "Xk9p/2@"),
        // A quoted value runs to its closing quote, spaces and separators included.
        (
            "password = \"correct horse battery staple\"",
            "correct horse battery staple",
        ),
        ("\"password\": \"Xk9,pQ2;mZ7\", \"user\": \"bob\"", "Xk9,pQ2;mZ7"),
        // A value that only starts like a reference or an expression.
        ("password=Envy2024Winter!x", "Envy2024Winter!x"),
        ("password=$Xk9pQ2mZ7wLr4tYv", "$Xk9pQ2mZ7wLr4tYv"),
        ("password=(Xk9pQ2mZ7wLr4tYv", "(Xk9pQ2mZ7wLr4tYv"),
        // A URL's password with `@` or `/` in it, whole.
        ("https://deploy:p@ss/w0rd@db.internal/app", "p@ss/w0rd"),
        ("mysql -h db -u app -pXk9pQ2mZ7 app", "Xk9pQ2mZ7"),
        ("signing_key: 9f8e7d6c5b4a3928", "9f8e7d6c5b4a3928"),
        (
            "token=Xk9pQ2mZ7wLr4tYv-secrets.abc",
            "Xk9pQ2mZ7wLr4tYv-secrets.abc",
        ),
    ] {
        assert_eq!(value(text), secret, "{text}");
    }
    for text in [
        "PASSWORD_MIN_LENGTH=12",
        "secret_name: app-secrets-prod",
        "token_url: oauth2-token-endpoint",
        "password_file: secrets-dir-file",
        "machine h login u password changeme",
        "Please login first; your password is required.",
        "usage: tool --password PASSWORD",
        "curl -u \"$USER:$PASS\" https://h/",
        "curl -u admin:${ADMIN_PASSWORD} https://h/",
        "password = \"Enter the password for the admin account\"",
        "password = \"your password here\"",
        "password = env(\"DB_PASSWORD\")",
        "password = env::var(\"DB_PASSWORD\")",
        "password=$DB_PASSWORD",
        "password=$dbPassword",
        "password=(get_password())",
        "https://www.example.com:8443/api?email=a@b.com",
        "https://docs.example.com/a/b@c",
        "0000https://www.example.com:8443/api?email=a@b.com",
        "x_postgres://${DB_USER}:${DB_PASSWORD}@db.internal/app",
        // Code and files that name a secret's word without holding one.
        "pub paren_token: token::Paren,",
        "_token_start: &Self::Checkpoint,",
        "pub const SE_PRIVILEGE: TOKEN_PRIVILEGES_ATTRIBUTES = 2147483648u32;",
        "password_data = (GnomeKeyringNetworkPasswordData *)entries->data;",
        "git-credential-osxkeychain: git-credential-osxkeychain.o",
        "\"home/.pgpass\": \"h:5432:*:u:p\\n\",",
        "bypass=Xk9pQ2mZ7wLr4tYv",
        "force_pass: true/false",
        "mysql -h db -u app -p app",
        "mysql -u app -p${DB_PASSWORD} app",
        "signing_key: ${SIGNING_KEY}",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "token = secrets.GITHUB_TOKEN",
        "api_key: process.env.API_KEY",
        "use signing_key::SigningKey, verifying_key::VerifyingKey;",
        "[choose_scheme]: crate::crypto::signer::SigningKey::choose_scheme",
        "machine HOSTNAME login USERID password \"PASSWORD\"",
    ] {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
}

const OPENSSH_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7
WgAAAAtzc2gtZWQyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixA
AAAEBjPYwPuZIOonW5WWtKr1lSBdwZHGc1KuOhUdmPnNe6fjLzqP6RMOAxVyZTooQwj9gk
/VojjDkhG2AsC9MdwyLEAAAAAXgBAgME";

#[test]
fn a_secret_in_a_configuration_format_names_its_value() {
    for text in [
        "    'password' => 'Xk9pQ2mZ7wLr4tYv',",
        "<password>Xk9pQ2mZ7wLr4tYv</password>",
        "  <secret> Xk9pQ2mZ7wLr4tYv </secret>",
        "<apiKey>Xk9pQ2mZ7wLr4tYv</apiKey>",
        "<db.password type=\"plain\">Xk9pQ2mZ7wLr4tYv</db.password>",
        "DATABASES['default']['PASSWORD'] = 'Xk9pQ2mZ7wLr4tYv'",
        "ENV[\"API_TOKEN\"] = \"Xk9pQ2mZ7wLr4tYv\"",
        "password := \"Xk9pQ2mZ7wLr4tYv\"",
        "sshpass -p 'Xk9pQ2mZ7wLr4tYv' ssh host",
        "sshpass -pXk9pQ2mZ7wLr4tYv ssh host",
    ] {
        assert_eq!(value(text), "Xk9pQ2mZ7wLr4tYv", "{text}");
    }
    assert_eq!(kinds("glpat-QmTzKpWxRbLcVnHdJfGs"), ["GitLab token"]);
    for text in [
        "'password' => env('DB_PASSWORD'),",
        "'password' => $password,",
        "<password>${DB_PASSWORD}</password>",
        "<password/>",
        "<password></password>",
        "<password>changeme</password>",
        "<passwordPolicy>StrictPolicy2024</passwordPolicy>",
        "Option<SecretString>, Vec<Token>",
        "DATABASES['default']['PASSWORD'] = os.environ['DB_PASSWORD']",
        "password := os.Getenv(\"DB_PASSWORD\")",
        "if params['password'] == 'password'",
        "sshpass -p \"$SSHPASS\" ssh host",
        "glpat-abcdefghijklmnopqrst",
    ] {
        assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
    }
}

#[test]
fn an_openssh_key_body_without_its_begin_line_is_a_private_key() {
    let end = "-----END OPENSSH PRIVATE KEY-----";
    for (text, key) in [
        // `grep -v BEGIN`: the body and the end line.
        (
            format!("{OPENSSH_BODY}\n{end}\nnext line\n"),
            format!("{OPENSSH_BODY}\n{end}"),
        ),
        // The begin line altered, and no end line: the base64 lines, up to one that is not.
        (
            format!(
                "----- BEGIN OPENSSH PRIVATE KEY-----\r\n{}\r\ntotal 8\n",
                OPENSSH_BODY.replace('\n', "\r\n")
            ),
            // A line's CR goes with it.
            format!("{}\r", OPENSSH_BODY.replace('\n', "\r\n")),
        ),
    ] {
        let found = scan(text.as_bytes());
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert_eq!(found[0].kind, "private key");
        assert_eq!(&text[found[0].start..found[0].end], key);
    }
    // A public key and other base64 are none.
    for text in [
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDLzqP6RMOAxVyZTooQwj9gk/VojjDkhG2AsC9MdwyLE x@h",
        "Zm9vYmFyYmF6cXV4AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\nQyNTUxOQAAACAy86j",
    ] {
        assert!(kinds(text).is_empty(), "{text}");
    }
}

#[test]
fn a_credential_with_terminal_escapes_inside_is_found_and_covers_them() {
    let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
    for (text, span) in [
        // `grep --color=always`: the match coloured, the token cut by the sequences.
        (
            format!("api_token: \x1b[01;31m\x1b[Kghp\x1b[m\x1b[K{}", &token[3..]),
            format!("ghp\x1b[m\x1b[K{}", &token[3..]),
        ),
        (
            format!("api_token: {}\x1b[0m{}\n", &token[..14], &token[14..]),
            format!("{}\x1b[0m{}", &token[..14], &token[14..]),
        ),
        // A title (OSC) inside, ended by BEL and by ST.
        (
            format!("x {}\x1b]0;t\x07{} \x1b]0;u\x1b\\y", &token[..9], &token[9..]),
            format!("{}\x1b]0;t\x07{}", &token[..9], &token[9..]),
        ),
        (
            "url: postgres://deploy:Xk9p\x1b[1mQ2mZ7wLr4tYv\x1b[0m@db.internal/app".to_owned(),
            // A sequence right after the credential is not part of it.
            "Xk9p\x1b[1mQ2mZ7wLr4tYv".to_owned(),
        ),
    ] {
        let found = scan(text.as_bytes());
        assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        assert_eq!(&text[found[0].start..found[0].end], span, "{text:?}");
        let redacted = String::from_utf8(redact_text(&text)).unwrap();
        assert!(
            !redacted.contains("R8sT3vY6") && !redacted.contains("wLr4"),
            "{redacted:?}"
        );
    }
    // Any other escape sequence (ESC, intermediate bytes, a final byte) and the 8-bit control sequence
    // introducer are removed as a terminal consumes them.
    for (text, span) in [
        (
            format!("{}\x1b(B{}\n", &token[..14], &token[14..]),
            format!("{}\x1b(B{}", &token[..14], &token[14..]),
        ),
        (
            format!("x {}\x1b7{} y", &token[..14], &token[14..]),
            format!("{}\x1b7{}", &token[..14], &token[14..]),
        ),
        (
            format!("{}\x1bc{}", &token[..14], &token[14..]),
            format!("{}\x1bc{}", &token[..14], &token[14..]),
        ),
        (
            format!("{}\x1b#8\x1b)0{}", &token[..5], &token[5..]),
            format!("{}\x1b#8\x1b)0{}", &token[..5], &token[5..]),
        ),
        (
            format!("{}\u{9b}0m{}", &token[..14], &token[14..]),
            format!("{}\u{9b}0m{}", &token[..14], &token[14..]),
        ),
        // A sequence whose final byte is the credential's first letter: the text as it lies holds it.
        (format!("\x1b{token}"), token.to_owned()),
    ] {
        let found = scan(text.as_bytes());
        assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        assert_eq!(&text[found[0].start..found[0].end], span, "{text:?}");
        let redacted = String::from_utf8(redact_text(&text)).unwrap();
        assert!(!redacted.contains("456789abcdef"), "{redacted:?}");
    }
    // Escapes around a word that is no credential make none; an unfinished one stays as it is.
    for text in [
        "\x1b[01;31mghp\x1b[m_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "token: \x1b[1mchangeme\x1b[0m",
        "\x1b[31merror\x1b[0m: \x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1b[",
        "\x1b(Bghp\x1b(B_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \x1b7 \x1b",
        "caf\u{e9} \u{a0}\u{9b} ghp_\u{9b}0123",
    ] {
        assert!(kinds(text).is_empty(), "{text:?}: {:?}", kinds(text));
    }
}

#[test]
fn anthropic_names_its_key_before_the_generic_sk_rule() {
    let key = "sk-ant-api03-Zq8vN2xL5pR7tK1mW9cB4yH6jF3dG0sA8eQ2uV7iO1nM5kJ9lP4rT6wX3zY0bC2";
    assert_eq!(kinds(key), ["Anthropic key"]);
}

#[test]
fn an_anchor_across_the_search_windows_is_found() {
    // The text is lowercased and searched a window at a time: a credential (and its anchor) at each offset
    // across a window's end is found, whether the window ends in its anchor or in its value.
    let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
    let block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----";
    for (credential, kind) in [
        (token, "GitHub token"),
        ("sk-proj-Zq8vN2xL5pR7tK1mW9cB4yH6jF3dG0sA", "OpenAI key"),
        (block, "private key"),
    ] {
        for window in [WINDOW, 2 * WINDOW] {
            for before in window - credential.len() - 2..window + 2 {
                let mut text = "a".repeat(before - 1);
                text.push(' ');
                text.push_str(credential);
                text.push('\n');
                let found = scan(text.as_bytes());
                assert_eq!(
                    found.iter().map(|f| (f.kind, f.start)).collect::<Vec<_>>(),
                    [(kind, before)],
                    "{kind} at {before}"
                );
            }
        }
    }
}

#[test]
fn an_anchor_is_found_in_any_case() {
    // A name the assignment rule anchors on is found however it is written, not only in the three common
    // forms.
    for line in [
        "tOkEn: Zr8kQ2vLm5Tx9wPq",
        "DB_PassWord=Zr8kQ2vLm5Tx9wPq",
        "Api_Key = Zr8kQ2vLm5Tx9wPq",
    ] {
        assert_eq!(kinds(line), ["password or secret assignment"], "{line}");
    }
}

#[test]
fn a_value_on_the_line_after_its_name_is_found_and_named_alone() {
    for (text, expected) in [
        ("password: |\n  Xk9pQ2mZ7wLr4tYv\nuser: app\n", "Xk9pQ2mZ7wLr4tYv"),
        (
            "db:\n  token: >-\n    Tq7vLm2XpR9kWz4N\n  host: x\n",
            "Tq7vLm2XpR9kWz4N",
        ),
        ("api_key: |2+\n\n   \n  Nk4RtQ9vLm2XpW7z\n", "Nk4RtQ9vLm2XpW7z"),
        ("secret: >\r\n  Wz6kTq3LmX8pRv2N\r\n", "Wz6kTq3LmX8pRv2N"),
        ("smtp_password:\n  Wz6kTq3LmX8pRv2N\n", "Wz6kTq3LmX8pRv2N"),
        (
            "{\n  \"password\":\n    \"hCFmjTlDS11Bl9E\",\n  \"user\": \"app\"\n}\n",
            "hCFmjTlDS11Bl9E",
        ),
        (
            "{\n\"client_secret\":\n\"YBmnBecbzAi@P-jNBm0iv#a\"\n}\n",
            "YBmnBecbzAi@P-jNBm0iv#a",
        ),
        (
            "- name: deploy\n  private_key: |\n    kiHIu5xc!JBoVIOldd5@Z5MXoMVKil8\n",
            "kiHIu5xc!JBoVIOldd5@Z5MXoMVKil8",
        ),
        (
            "DB_PASSWORD: |-\n  correct horse battery staple\n",
            "correct horse battery staple",
        ),
        // As `grep -r` prints it, each line after its file's name.
        (
            "config/app.yaml:db:\nconfig/app.yaml:  password: |\nconfig/app.yaml:    Qv7#mK2pLx9!wR4t\n",
            "Qv7#mK2pLx9!wR4t",
        ),
        (
            "a.json:3:  \"token\":\na.json:4:    \"Tq7vLm2XpR9kWz4N\"\n",
            "Tq7vLm2XpR9kWz4N",
        ),
        // The value line of one name is the name line of the next.
        (
            "credentials:\n  token:\n    Xk9pQ2mZ7wLr4tYv\n",
            "Xk9pQ2mZ7wLr4tYv",
        ),
    ] {
        assert_eq!(value(text), expected, "{text:?}");
    }
    for text in [
        "password: |\n  ${DB_PASSWORD}\n",
        "token: >-\n  {{ vault_token }}\n",
        "\"password\":\n  \"changeme\"\n",
        "password:\n  type: string\n  minLength: 12\n",
        "password:\n  secretKeyRef:\n    name: db\n",
        "password:\nusername: admin\n",
        "password: |\nXk9pQ2mZ7wLr4tYv\n",
        "  password: |\n  Xk9pQ2mZ7wLr4tYv\n",
        "token:\n  - read\n  - write\n",
        "token:\n  $ref: '#/components/schemas/Token'\n",
        "password_min_length:\n  16\n",
        "description: |\n  Xk9pQ2mZ7wLr4tYv\n",
        "if password:\n    Xk9pQ2mZ7wLr4tYv()\n",
        "password: |\n  The password of the admin account, at least twelve characters long.\n",
        "PASSWORD=\nXk9pQ2mZ7wLr4tYv\n",
    ] {
        assert!(kinds(text).is_empty(), "{text:?}: {:?}", kinds(text));
    }
}

/// `lines` as `grep -r` prints them, each after `name:` (and its number, `name:N:`, when `numbered`).
fn grepped(name: &str, numbered: bool, lines: &[&str]) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(at, line)| match numbered {
            true => format!("{name}:{}:{line}\n", at + 1),
            false => format!("{name}:{line}\n"),
        })
        .collect()
}

#[test]
fn a_private_key_printed_with_its_files_name_before_each_line_is_redacted_whole() {
    let key = [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7",
        "/VojjDkhG2AsC9MdwyLEAAAAC3NzaC1lZDI1NTE5AAAAIDLzqP6RMOAxVyZTooQwj9gk",
        "-----END OPENSSH PRIVATE KEY-----",
    ];
    for name in ["keys/id_ed25519", "./deploy/ci_key", "keys/id"] {
        for numbered in [false, true] {
            // With its begin line, and without (the body recognised by how it starts).
            for lines in [&key[..], &key[1..]] {
                let text = format!("{}src/main.rs:fn main() {{}}\n", grepped(name, numbered, lines));
                let out = String::from_utf8(redact_text(&text)).unwrap();
                assert!(
                    !out.contains("b3Bl") && !out.contains("QyNTUx") && !out.contains("/Vojj"),
                    "{out}"
                );
                assert_eq!(out.matches("[redacted: private key]").count(), 1, "{out}");
                assert!(out.starts_with(name), "{out}");
                assert!(out.ends_with("\nsrc/main.rs:fn main() {}\n"), "{out}");
            }
        }
    }
}

/// A value ends at the first control byte: in a binary file the bytes after a name and its `:` or `=` are other
/// data (Python's bytecode of `ask_password("Password: ")`), which is no value; a value written as text before
/// such bytes (a database page, coloured output) is found, and only its text is the finding.
#[test]
fn a_value_ends_where_the_text_ends() {
    // Bytecode: the constant `Password: ` and then the marshalled bytes of the next constant.
    let bytecode =
        b"\xe3\x00\x00\x00\xda\x0bask_password\xfa\nPassword: T)\x02\xda\x08username\xda\x08passwordN)\x03r";
    assert!(scan(bytecode).is_empty(), "{:?}", scan(bytecode));
    let assignments: [&[u8]; 2] = [
        b"\x0d\x00\x00\x00password=hunter2Secret!\x00\x00\x00\x17\x01",
        b"\x1b[1mDB_PASSWORD=hunter2Secret!\x1b[0m\n",
    ];
    let page = assignments[0];
    let found = scan(page);
    assert_eq!(found.len(), 1, "{found:?}");
    let finding = found.first().unwrap();
    assert_eq!(page.get(finding.start..finding.end), Some(&b"hunter2Secret!"[..]));
    // Coloured output: the escape that ends the value is not part of it (with it, `[0m` made it an expression).
    let coloured = assignments[1];
    let found = scan(coloured);
    assert_eq!(found.len(), 1, "{found:?}");
    let finding = found.first().unwrap();
    assert_eq!(
        coloured.get(finding.start..finding.end),
        Some(&b"hunter2Secret!"[..])
    );
    // Text glued to a control byte is judged alone: `T)` is too short to be a value.
    assert!(kinds("password: T)").is_empty());
}

/// A private key inside a JSON string (a cloud service account's key file) has its line ends escaped: the finding
/// runs from its `BEGIN` line to its `END` line over them, so that no line of its body is left.
#[test]
fn a_private_key_in_a_json_string_is_found_whole() {
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
    for newline in ["\\n", "\\\\n", "\\r\\n"] {
        let key = format!(
            "-----BEGIN PRIVATE KEY-----{newline}{body}{newline}{body}{newline}-----END PRIVATE KEY-----{newline}"
        );
        let text = format!(
            "{{\"type\": \"service_account\", \"private_key_id\": \"x\", \"private_key\": \"{key}\", \"client_email\": \"a@b.iam.gserviceaccount.com\"}}"
        );
        let found = scan(text.as_bytes());
        let keys: Vec<&Finding> = found.iter().filter(|f| f.kind == "private key").collect();
        assert_eq!(keys.len(), 1, "{newline}: {found:?}");
        let span = text.get(keys[0].start..keys[0].end).unwrap();
        assert!(
            span.contains(body) && span.ends_with("-----END PRIVATE KEY-----"),
            "{span}"
        );
        assert!(!crate::redact_str(&text).contains(&body[..20]), "{newline}");
    }
}

#[test]
fn a_name_is_split_into_its_snake_and_camel_case_words() {
    for name in [
        "NextToken",
        "nextPageToken",
        "next_token",
        "StateCredentials",
        "Token",
        "API_KEY",
    ] {
        assert!(names_a_secret(name), "{name}");
    }
    for name in [
        "CorrectHorseBatteryStaple",
        "MonkeyKingdom",
        "Tokenizer",
        "qWeRtYuIoPaSdF",
        "NextMarker",
        "",
    ] {
        assert!(!names_a_secret(name), "{name}");
    }
}

/// The search of a process that has not compiled the table finds an anchor in a text exactly when the compiled
/// search does, so a text it passes holds no credential: every line of the scanner corpus, each line's words
/// alone, and ordinary command lines, in their case and in upper case.
#[test]
fn the_uncompiled_anchor_search_agrees_with_the_compiled_one() {
    let compiled = compile().unwrap();
    let corpus = include_str!("../tests/corpus.txt");
    let mut texts: Vec<String> = corpus
        .lines()
        .filter_map(|line| line.strip_prefix("+ ").or_else(|| line.strip_prefix("- ")))
        .flat_map(|line| std::iter::once(line.to_owned()).chain(line.split_whitespace().map(str::to_owned)))
        .collect();
    texts.extend(
        [
            "git status",
            "cargo test --workspace",
            "ls -la src",
            "npm run build 2>&1 | tail -20",
            "cat README.md | head -5",
        ]
        .map(str::to_owned),
    );
    let upper: Vec<String> = texts.iter().map(|t| t.to_ascii_uppercase()).collect();
    texts.extend(upper);
    let (mut with, mut without) = (0, 0);
    for text in &texts {
        let mut found = false;
        anchors_in(&compiled, text.as_bytes(), |_| found = true);
        assert_eq!(holds_an_anchor(text.as_bytes()), found, "{text:?}");
        if found {
            with += 1;
        } else {
            without += 1;
            assert!(scan_plain(text.as_bytes()).is_empty(), "{text:?}");
        }
    }
    // Both kinds are among the texts, so the comparison says something.
    assert!(
        with > 100 && without > 100,
        "{with} with an anchor, {without} without"
    );
}

/// The packed searches report an anchor at exactly the places where one begins, compared byte by byte in any
/// case, and the rules reported at a place hold the rules of every anchor that begins there: the scanner corpus
/// (three times, so that anchors fall across the search windows) in its case and in upper case, and each anchor
/// glued to itself and to the next.
#[test]
fn the_packed_searches_find_every_place_an_anchor_begins() {
    let compiled = compile().unwrap();
    let own: Vec<(Vec<u8>, RuleMask)> = RULES
        .iter()
        .enumerate()
        .flat_map(|(index, rule)| {
            rule.anchors
                .iter()
                .map(move |anchor| (anchor.to_ascii_lowercase().into_bytes(), 1 << index))
        })
        .collect();
    let corpus = include_str!("../tests/corpus.txt").repeat(3);
    let glued: String = RULES
        .iter()
        .flat_map(|rule| rule.anchors.iter())
        .map(|anchor| format!("{anchor}{anchor}-{} ", anchor.to_ascii_uppercase()))
        .collect();
    for text in [corpus.clone(), corpus.to_ascii_uppercase(), glued] {
        let text = text.as_bytes();
        let mut reported: Vec<(usize, RuleMask)> = Vec::new();
        anchors_in(&compiled, text, |anchor| {
            let rules = compiled.rules_of[anchor.id];
            match reported.last_mut() {
                Some((start, mask)) if *start == anchor.start => *mask |= rules,
                _ => reported.push((anchor.start, rules)),
            }
        });
        let expected: Vec<(usize, RuleMask)> = (0..text.len())
            .filter_map(|at| {
                let rules = own
                    .iter()
                    .filter(|(anchor, _)| {
                        text.get(at..at + anchor.len())
                            .is_some_and(|place| place.eq_ignore_ascii_case(anchor))
                    })
                    .fold(0, |mask, (_, rules)| mask | rules);
                (rules != 0).then_some((at, rules))
            })
            .collect();
        assert_eq!(
            reported.iter().map(|(at, _)| *at).collect::<Vec<_>>(),
            expected.iter().map(|(at, _)| *at).collect::<Vec<_>>()
        );
        for ((at, got), (_, wanted)) in reported.iter().zip(&expected) {
            assert_eq!(got & wanted, *wanted, "at {at}");
        }
    }
}
