/**
 * A small reader for nginx's configuration syntax, as ngx_conf_file.c reads it: words separated by
 * white space, `;` ending a directive, `{ ... }` a block, `#` starting a comment at the start of a
 * word, single or double quoted strings with backslash escapes, and `${name}` inside a word.
 */

export interface ConfArgument {
    /** The word as nginx sees it: quotes removed, escapes resolved. */
    value: string;
    quoted: boolean;
    /** A backslash escape was resolved in it (nginx keeps some backslashes that this reader drops). */
    escaped?: boolean;
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

/** Blocks nested deeper than MAX_BLOCK_DEPTH: refused, as no site needs them and a reader must stop somewhere. */
export class ConfTooDeepError extends ConfSyntaxError {
    constructor(reason: string, line: number) {
        super(reason, line);
        this.name = 'ConfTooDeepError';
    }
}

/** How deep blocks may nest: nginx sites use a handful of levels (server, location, if, nested locations). */
export const MAX_BLOCK_DEPTH = 32;

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
        let escaped = false;
        while (this.#position < this.source.length) {
            const char = this.#advance();
            if (char === quote) {
                this.#expectSeparator();
                const argument = { value, quoted: true, start, end: this.#position };
                return { kind: 'word', argument: escaped ? { ...argument, escaped } : argument, line };
            }

            escaped ||= char === '\\';
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
        let escaped = false;
        while (this.#position < this.source.length) {
            const char = this.source.charAt(this.#position);
            if (SPACE.has(char) || char === ';' || (char === '}' && !variable) || (char === '{' && !variable)) {
                break;
            }

            this.#advance();
            if (char === '\\' && this.#position < this.source.length) {
                value += this.#advance();
                escaped = true;
                continue;
            }

            // `${name}` keeps its braces inside the word.
            variable = char === '$' ? this.source.charAt(this.#position) === '{' : variable && char !== '}';
            value += char;
        }

        const argument = { value, quoted: false, start, end: this.#position };
        return { kind: 'word', argument: escaped ? { ...argument, escaped } : argument, line };
    }
}

/** A block being read: its directive's name and arguments, and the directives read inside it so far. */
interface OpenBlock {
    name: ConfArgument;
    args: ConfArgument[];
    line: number;
    directives: ConfDirective[];
}

/**
 * Reads directives with a stack of open blocks rather than by recursion, so no text can exhaust the call
 * stack, and refuses blocks nested deeper than MAX_BLOCK_DEPTH.
 */
class Parser {
    readonly #lexer: Lexer;
    readonly #top: ConfDirective[] = [];
    readonly #open: OpenBlock[] = [];

    constructor(source: string) {
        this.#lexer = new Lexer(source);
    }

    parse(): ConfFile {
        for (let token = this.#lexer.next(); token; token = this.#lexer.next()) {
            if (token.kind === '}') {
                this.#close(token);
            } else if (token.kind === 'word') {
                this.#directive(token.argument, token.line);
            } else {
                throw new ConfSyntaxError(`unexpected "${token.kind}"`, token.line);
            }
        }

        const unclosed = this.#open.at(-1);
        if (unclosed) {
            throw new ConfSyntaxError('unexpected end of file, expecting "}"', unclosed.line);
        }

        return { directives: this.#top, comments: this.#lexer.comments };
    }

    get #current(): ConfDirective[] {
        return this.#open.at(-1)?.directives ?? this.#top;
    }

    #close(closing: Exclude<Token, { kind: 'word' }>): void {
        const block = this.#open.pop();
        if (!block) {
            throw new ConfSyntaxError('unexpected "}"', closing.line);
        }

        const { name, args, directives, line } = block;
        this.#current.push({ name: name.value, args, block: directives, line, start: name.start, end: closing.end });
    }

    /** A directive's arguments up to its `;` (a directive) or `{` (a block opened). */
    #directive(name: ConfArgument, line: number): void {
        const args: ConfArgument[] = [];
        for (;;) {
            const token = this.#lexer.next();
            if (!token) {
                throw new ConfSyntaxError('unexpected end of file, expecting ";" or "}"', line);
            }

            if (token.kind === 'word') {
                args.push(token.argument);
            } else if (token.kind === ';') {
                this.#current.push({ name: name.value, args, line, start: name.start, end: token.end });
                return;
            } else if (token.kind === '{') {
                this.#openBlock({ name, args, line, directives: [] });
                return;
            } else {
                throw new ConfSyntaxError('unexpected "}"', token.line);
            }
        }
    }

    #openBlock(block: OpenBlock): void {
        if (this.#open.length >= MAX_BLOCK_DEPTH) {
            throw new ConfTooDeepError(`blocks nested more than ${MAX_BLOCK_DEPTH} deep`, block.line);
        }

        this.#open.push(block);
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
