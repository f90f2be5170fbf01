/**
 * A small reader for nginx's configuration syntax, as ngx_conf_file.c reads it: words separated by
 * white space, `;` ending a directive, `{ ... }` a block, `#` starting a comment at the start of a
 * word, single or double quoted strings with backslash escapes, and `${name}` inside a word.
 */

export interface ConfArgument {
    /** The word as nginx sees it: quotes removed, escapes resolved. */
    value: string;
    quoted: boolean;
    /** Offsets of the word in the source, quotes included. */
    start: number;
    end: number;
}

export interface ConfDirective {
    name: string;
    args: ConfArgument[];
    /** The directives of its `{ ... }` block, when it has one. */
    block?: ConfDirective[];
    line: number;
    /** Offsets in the source: from the directive's name to its `;` or closing `}` included. */
    start: number;
    end: number;
}

export interface ConfComment {
    text: string;
    line: number;
    start: number;
    end: number;
}

export interface ConfFile {
    directives: ConfDirective[];
    comments: ConfComment[];
}

export class ConfSyntaxError extends Error {
    constructor(
        readonly reason: string,
        readonly line: number,
    ) {
        super(`line ${line}: ${reason}`);
        this.name = 'ConfSyntaxError';
    }
}

type Token = { kind: 'word'; argument: ConfArgument; line: number } | { kind: ';' | '{' | '}'; start: number; end: number; line: number };

const SPACE = new Set([' ', '\t', '\r', '\n']);
const SPECIAL = new Set([';', '{', '}']);
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t' };

class Lexer {
    #position = 0;
    #line = 1;
    readonly comments: ConfComment[] = [];

    constructor(private readonly source: string) {}

    next(): Token | undefined {
        this.#skipSpaceAndComments();
        if (this.#position >= this.source.length) {
            return undefined;
        }

        const char = this.source.charAt(this.#position);
        if (SPECIAL.has(char)) {
            const start = this.#position;
            this.#position += 1;
            return { kind: char as ';' | '{' | '}', start, end: this.#position, line: this.#line };
        }

        return char === '"' || char === "'" ? this.#quoted(char) : this.#bare();
    }

    #advance(): string {
        const char = this.source.charAt(this.#position);
        this.#position += 1;
        if (char === '\n') {
            this.#line += 1;
        }

        return char;
    }

    #skipSpaceAndComments(): void {
        while (this.#position < this.source.length) {
            const char = this.source.charAt(this.#position);
            if (SPACE.has(char)) {
                this.#advance();
            } else if (char === '#') {
                this.#comment();
            } else {
                return;
            }
        }
    }

    #comment(): void {
        const start = this.#position;
        const newline = this.source.indexOf('\n', start);
        const end = newline < 0 ? this.source.length : newline;
        this.comments.push({ text: this.source.slice(start + 1, end).trim(), line: this.#line, start, end });
        this.#position = end;
    }

    #quoted(quote: string): Token {
        const start = this.#position;
        const line = this.#line;
        this.#advance();
        let value = '';
        while (this.#position < this.source.length) {
            const char = this.#advance();
            if (char === quote) {
                this.#expectSeparator();
                return { kind: 'word', argument: { value, quoted: true, start, end: this.#position }, line };
            }

            value += char === '\\' ? this.#escaped(quote) : char;
        }

        throw new ConfSyntaxError('unexpected end of file, expecting a closing quote', line);
    }

    #escaped(quote: string): string {
        const next = this.source.charAt(this.#position);
        if (next === quote || next === '\\') {
            this.#advance();
            return next;
        }

        if (next in ESCAPES) {
            this.#advance();
            return ESCAPES[next] ?? next;
        }

        return '\\';
    }

    /** nginx wants white space, `;` or `{` after a closing quote. */
    #expectSeparator(): void {
        const after = this.source.charAt(this.#position);
        if (after !== '' && !SPACE.has(after) && after !== ';' && after !== '{') {
            throw new ConfSyntaxError(`unexpected "${after}"`, this.#line);
        }
    }

    #bare(): Token {
        const start = this.#position;
        const line = this.#line;
        let value = '';
        let variable = false;
        while (this.#position < this.source.length) {
            const char = this.source.charAt(this.#position);
            if (SPACE.has(char) || char === ';' || (char === '}' && !variable) || (char === '{' && !variable)) {
                break;
            }

            this.#advance();
            if (char === '\\' && this.#position < this.source.length) {
                value += this.#advance();
                continue;
            }

            // `${name}` keeps its braces inside the word.
            variable = char === '$' ? this.source.charAt(this.#position) === '{' : variable && char !== '}';
            value += char;
        }

        return { kind: 'word', argument: { value, quoted: false, start, end: this.#position }, line };
    }
}

class Parser {
    readonly #lexer: Lexer;

    constructor(source: string) {
        this.#lexer = new Lexer(source);
    }

    parse(): ConfFile {
        const { directives, closing } = this.#directives();
        if (closing) {
            throw new ConfSyntaxError('unexpected "}"', closing.line);
        }

        return { directives, comments: this.#lexer.comments };
    }

    #directives(): { directives: ConfDirective[]; closing?: Token } {
        const directives: ConfDirective[] = [];
        for (;;) {
            const token = this.#lexer.next();
            if (!token) {
                return { directives };
            }

            if (token.kind === '}') {
                return { directives, closing: token };
            }

            if (token.kind !== 'word') {
                throw new ConfSyntaxError(`unexpected "${token.kind}"`, token.line);
            }

            directives.push(this.#directive(token.argument, token.line));
        }
    }

    #directive(name: ConfArgument, line: number): ConfDirective {
        const args: ConfArgument[] = [];
        for (;;) {
            const token = this.#lexer.next();
            if (!token) {
                throw new ConfSyntaxError('unexpected end of file, expecting ";" or "}"', line);
            }

            if (token.kind === 'word') {
                args.push(token.argument);
            } else if (token.kind === ';') {
                return { name: name.value, args, line, start: name.start, end: token.end };
            } else if (token.kind === '{') {
                return this.#block(name, args, line);
            } else {
                throw new ConfSyntaxError('unexpected "}"', token.line);
            }
        }
    }

    #block(name: ConfArgument, args: ConfArgument[], line: number): ConfDirective {
        const { directives, closing } = this.#directives();
        if (!closing || closing.kind === 'word') {
            throw new ConfSyntaxError('unexpected end of file, expecting "}"', line);
        }

        return { name: name.value, args, block: directives, line, start: name.start, end: closing.end };
    }
}

/** Reads nginx configuration text; a syntax error is a ConfSyntaxError with its line. */
export function readConf(source: string): ConfFile {
    return new Parser(source).parse();
}

/** The directives named `name` in a list. */
export function directivesNamed(directives: ConfDirective[], name: string): ConfDirective[] {
    return directives.filter((directive) => directive.name === name);
}

export function argumentValues(directive: ConfDirective): string[] {
    return directive.args.map((argument) => argument.value);
}
