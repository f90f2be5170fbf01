/** The two small text formats Compose reads besides YAML: env files and commands written as one string. */

/** `NAME=value` lines; `#` comments and blank lines skipped; double-quoted values unescaped, single-quoted kept literal. */
export function parseEnvFile(text: string): Record<string, string> {
    const values: Record<string, string> = {};
    for (const rawLine of text.split(/\r?\n/)) {
        const line = rawLine.trim().replace(/^export\s+/, '');
        const equals = line.indexOf('=');
        if (line === '' || line.startsWith('#') || equals <= 0) {
            continue;
        }

        values[line.slice(0, equals).trim()] = unquote(line.slice(equals + 1).trim());
    }

    return values;
}

function unquote(value: string): string {
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
        try {
            return JSON.parse(value) as string;
        } catch {
            return value.slice(1, -1);
        }
    }

    if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
        return value.slice(1, -1);
    }

    return value.replace(/\s+#.*$/, '');
}

/** Splits a command as a POSIX shell would split its words (quotes and backslashes), without expanding anything. */
export function splitCommand(command: string): string[] {
    const words: string[] = [];
    let word = '';
    let inWord = false;
    let quote: '"' | "'" | null = null;
    for (let index = 0; index < command.length; index++) {
        const char = command[index] as string;
        if (quote) {
            if (char === quote) {
                quote = null;
            } else if (char === '\\' && quote === '"' && /["\\$`]/.test(command[index + 1] ?? '')) {
                word += command[++index];
            } else {
                word += char;
            }
        } else if (char === '"' || char === "'") {
            quote = char;
            inWord = true;
        } else if (char === '\\') {
            word += command[++index] ?? '';
            inWord = true;
        } else if (/\s/.test(char)) {
            if (inWord) {
                words.push(word);
            }

            word = '';
            inWord = false;
        } else {
            word += char;
            inWord = true;
        }
    }

    if (inWord) {
        words.push(word);
    }

    return words;
}
