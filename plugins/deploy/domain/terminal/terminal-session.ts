/**
 * One terminal session: a shell in a container (`docker exec` with a TTY) joined to a WebSocket, bytes both ways.
 * What is typed and what the shell writes only pass through: nothing of them is kept or logged.
 */
import Crypto from 'node:crypto';
import type { Duplex } from 'node:stream';

import type Docker from 'dockerode';
import type WebSocket from 'ws';

/** bash when the image has it, else its sh. */
export const SHELL_COMMAND = ['/bin/sh', '-c', 'command -v bash >/dev/null && exec bash || exec sh'];

/** Each session's shell carries `GATEHOUSE_TERMINAL=<id>` in its environment, and so does what it starts. */
const MARKER = 'GATEHOUSE_TERMINAL';

/**
 * Docker leaves an exec running when its connection closes, so a session's end hangs its processes up as closing an
 * ssh connection does: SIGHUP to every process carrying the session's marker (`$1`). A process that ignores SIGHUP
 * (nohup) is left to run, as after ssh.
 */
const HANG_UP_SCRIPT =
    'for f in /proc/[0-9]*/environ; do p=${f#/proc/}; p=${p%/environ}; ' +
    'tr "\\000" "\\n" < "$f" 2>/dev/null | grep -qxF "$1" && kill -HUP "$p" 2>/dev/null; done; exit 0';

/** How long the hang-up may take before the session ends without it. */
const HANG_UP_TIMEOUT_MS = 10_000;

/** Output waiting to go to a slow browser: past this much the shell's output is paused until it is sent. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** A terminal's size, as the browser's xterm.js measures it. */
const MAX_SIZE = 500;

export type SessionEnd = 'closed' | 'exited' | 'idle' | 'stopped' | 'failed';

/** The WebSocket close code of each end: the idle close has one of its own (4000, private use), for the UI to tell. */
const CLOSE_CODES: Record<SessionEnd, number> = { closed: 1000, exited: 1000, idle: 4000, stopped: 1001, failed: 1011 };

export const IDLE_CLOSE_CODE = CLOSE_CODES.idle;

export interface SessionSummary {
    startedAt: number;
    seconds: number;
    ended: SessionEnd;
}

export interface SessionOptions {
    container: Docker.Container;
    /** After this long without input or output, the session is closed. */
    idleSeconds: number;
    /** Told of what went wrong around the session (never of what passed through it). */
    warn: (message: string) => void;
}

type Control = { resize: { cols: number; rows: number } } | 'ignored';

function isSize(value: unknown): value is number {
    return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_SIZE;
}

/**
 * A text frame `{"resize": {"cols": N, "rows": N}}` asks for a new size (N from 1 to 500; out of bounds, it is
 * ignored); any other frame is input. The web UI sends what is typed as binary frames, so typed text is never taken
 * for a resize.
 */
export function controlOf(text: string): Control | undefined {
    if (!text.startsWith('{')) {
        return undefined;
    }

    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch {
        return undefined;
    }

    if (typeof parsed !== 'object' || parsed === null || !('resize' in parsed)) {
        return undefined;
    }

    const { cols, rows } = (parsed.resize ?? {}) as { cols?: unknown; rows?: unknown };
    return isSize(cols) && isSize(rows) ? { resize: { cols, rows } } : 'ignored';
}

function asBuffer(data: WebSocket.RawData): Buffer {
    if (Array.isArray(data)) {
        return Buffer.concat(data);
    }

    return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** "15 minutes", "1 minute", "90 seconds". */
export function durationWords(seconds: number): string {
    const [count, unit] = seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
    return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export class TerminalSession {
    readonly startedAt = Date.now();
    /** Resolves once the session has ended, its shell hung up and its socket closed. */
    readonly finished: Promise<SessionSummary>;

    readonly #socket: WebSocket;
    readonly #options: SessionOptions;
    readonly #id = Crypto.randomBytes(16).toString('hex');
    #exec: Docker.Exec | undefined;
    #stream: Duplex | undefined;
    #idle: NodeJS.Timeout | undefined;
    #ending: SessionEnd | undefined;
    #settle: (summary: SessionSummary) => void = () => undefined;
    /** Frames are handled one after the other: input sent after a resize reaches the shell after it. */
    #queue: Promise<void>;

    constructor(socket: WebSocket, options: SessionOptions) {
        this.#socket = socket;
        this.#options = options;
        this.finished = new Promise((resolve) => {
            this.#settle = resolve;
        });
        socket.binaryType = 'nodebuffer';
        socket.on('message', (data, isBinary) => {
            this.#queue = this.#queue.then(() => this.#receive(asBuffer(data), isBinary));
        });
        socket.on('close', () => void this.end('closed', 'the browser closed the terminal'));
        socket.on('error', () => void this.end('closed', 'the connection failed'));
        this.#queue = this.#begin();
    }

    /** Ends the session (once): hangs the shell up, closes the socket with `code`'s reason, then settles `finished`. */
    async end(how: SessionEnd, reason: string): Promise<void> {
        if (this.#ending) {
            return;
        }

        this.#ending = how;
        clearTimeout(this.#idle);
        await this.#hangUp();
        this.#stream?.destroy();
        if (this.#socket.readyState === this.#socket.OPEN || this.#socket.readyState === this.#socket.CONNECTING) {
            // A close reason is at most 123 bytes.
            this.#socket.close(CLOSE_CODES[how], Buffer.from(reason).subarray(0, 123).toString());
        }

        this.#settle({ startedAt: this.startedAt, seconds: Math.round((Date.now() - this.startedAt) / 1000), ended: how });
    }

    async #begin(): Promise<void> {
        try {
            const exec = await this.#options.container.exec({
                Cmd: SHELL_COMMAND,
                AttachStdin: true,
                AttachStdout: true,
                AttachStderr: true,
                Tty: true,
                Env: ['TERM=xterm-256color', `${MARKER}=${this.#id}`],
            });
            this.#exec = exec;
            const stream = await exec.start({ hijack: true, stdin: true, Tty: true });
            this.#stream = stream;
            if (this.#ending) {
                stream.destroy();
                return;
            }

            stream.on('data', (chunk: Buffer) => this.#output(chunk, stream));
            stream.once('end', () => void this.end('exited', 'the shell exited'));
            stream.once('close', () => void this.end('exited', 'the shell exited'));
            stream.on('error', () => void this.end('exited', 'the shell exited'));
            this.#touch();
        } catch (error) {
            const message = (error as { json?: { message?: string }; message?: string }).json?.message ?? (error as Error).message;
            await this.end('failed', `could not start a shell: ${message}`);
        }
    }

    #output(chunk: Buffer, stream: Duplex): void {
        this.#touch();
        if (this.#socket.readyState !== this.#socket.OPEN) {
            return;
        }

        this.#socket.send(chunk, { binary: true }, () => {
            if (stream.isPaused() && this.#socket.bufferedAmount < MAX_BUFFERED_BYTES / 2) {
                stream.resume();
            }
        });
        if (this.#socket.bufferedAmount > MAX_BUFFERED_BYTES) {
            stream.pause();
        }
    }

    async #receive(data: Buffer, isBinary: boolean): Promise<void> {
        if (this.#ending || !this.#exec || !this.#stream) {
            return;
        }

        const control = isBinary ? undefined : controlOf(data.toString('utf8'));
        if (control === 'ignored') {
            return;
        }

        if (control) {
            await this.#exec.resize({ h: control.resize.rows, w: control.resize.cols }).catch((error: unknown) => {
                this.#options.warn(`terminal: could not resize: ${(error as Error).message}`);
            });
            return;
        }

        this.#touch();
        this.#stream.write(data);
    }

    /** Input or output: the idle time starts again. */
    #touch(): void {
        clearTimeout(this.#idle);
        const { idleSeconds } = this.#options;
        this.#idle = setTimeout(
            () => void this.end('idle', `closed after ${durationWords(idleSeconds)} without input or output`),
            idleSeconds * 1000,
        );
        this.#idle.unref();
    }

    /** SIGHUP to the session's processes, unless its shell has exited; a failure is told, and the session ends anyway. */
    async #hangUp(): Promise<void> {
        if (!this.#exec) {
            return;
        }

        try {
            const running = (await this.#exec.inspect()).Running;
            if (!running) {
                return;
            }

            const hangUp = await this.#options.container.exec({
                Cmd: ['/bin/sh', '-c', HANG_UP_SCRIPT, 'sh', `${MARKER}=${this.#id}`],
                AttachStdout: true,
                AttachStderr: true,
            });
            const output = await hangUp.start({});
            await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, HANG_UP_TIMEOUT_MS);
                const done = () => {
                    clearTimeout(timer);
                    resolve();
                };
                output.once('end', done);
                output.once('close', done);
                output.once('error', done);
                output.resume();
            });
        } catch (error) {
            this.#options.warn(`terminal: could not hang the shell up: ${(error as Error).message}`);
        }
    }
}
