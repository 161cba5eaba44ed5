//! Words of a command line split as a POSIX shell's quoting splits them, for the places that only need a
//! line's words (an imported example, the program of a hook entry), not its meaning.

/// Splits a command line into words the way a POSIX shell's quoting does (what Codex's `shlex` does):
/// blanks separate, single quotes keep everything, double quotes and backslashes escape.
pub(crate) fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("an unterminated ' quote in `{line}`")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(format!("an unterminated \" quote in `{line}`")),
                        },
                        Some(other) => word.push(other),
                        None => return Err(format!("an unterminated \" quote in `{line}`")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}
