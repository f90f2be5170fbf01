import Fs from 'node:fs';

type WriteBytes = (fd: number, bytes: Buffer, done: (error: NodeJS.ErrnoException | null, written: number) => void) => void;
type WriteBytesSync = (fd: number, bytes: Buffer) => number;

/** How long a line may wait for the lines after it: one write per this many milliseconds at most. */
export const BATCH_MS = 20;
/** Characters kept waiting while the descriptor takes nothing (a stuck pipe); lines beyond are dropped and counted. */
const MAX_QUEUED_CHARACTERS = 8 * 1024 * 1024;
/** A write refused because the descriptor is non-blocking and full is tried again after this many milliseconds. */
const RETRY_MS = 10;

/**
 * Log lines written to a file descriptor in batches, off the request's path: a line is queued, and the lines queued
 * within BATCH_MS go out in one asynchronous write, in order; lines that arrive while a write is under way go out
 * after it. What is still queued at exit is written synchronously.
 *
 * Each asynchronous write hands its bytes to a thread of libuv's pool and wakes the event loop when done: once per
 * line (or per turn of the event loop, as pino's own destination does under load) that hand-over cost a loaded server
 * more than building the line, and a synchronous write per line blocks on a slow pipe.
 */
export class BatchedLineStream {
    readonly #fd: number;
    readonly #write: WriteBytes;
    readonly #writeSync: WriteBytesSync;
    readonly #batchMs: number;
    #queued: string[] = [];
    #queuedCharacters = 0;
    #dropped = 0;
    #pending: Buffer | undefined;
    #writing = false;
    #timer: NodeJS.Timeout | undefined;

    constructor(
        fd: number,
        {
            write = (target, bytes, done) => Fs.write(target, bytes, 0, bytes.length, null, done),
            writeSync = Fs.writeSync,
            batchMs = BATCH_MS,
        }: { write?: WriteBytes; writeSync?: WriteBytesSync; batchMs?: number } = {},
    ) {
        this.#fd = fd;
        this.#write = write;
        this.#writeSync = writeSync;
        this.#batchMs = batchMs;
    }

    write(line: string): boolean {
        if (this.#queuedCharacters + line.length > MAX_QUEUED_CHARACTERS) {
            this.#dropped += 1;
            return false;
        }

        this.#queued.push(line);
        this.#queuedCharacters += line.length;
        if (this.#pending === undefined) {
            this.#schedule();
        }

        return true;
    }

    /**
     * Writes what is still to go, synchronously: at exit, where nothing asynchronous runs any more. A batch already
     * handed to the pool's thread is left to it (writing it again could write it twice).
     */
    flushSync(): void {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        const waiting = this.#writing ? undefined : this.#pending;
        let bytes = Buffer.concat([waiting ?? Buffer.alloc(0), this.#take() ?? Buffer.alloc(0)]);
        if (!this.#writing) {
            this.#pending = undefined;
        }

        try {
            while (bytes.length > 0) {
                bytes = bytes.subarray(this.#writeSync(this.#fd, bytes));
            }
        } catch {
            // The descriptor is gone: nothing is left to tell.
        }
    }

    #schedule(): void {
        if (this.#timer !== undefined) {
            return;
        }

        this.#timer = setTimeout(() => {
            this.#timer = undefined;
            this.#writeNext();
        }, this.#batchMs);
        // A line waiting to be written does not keep the process alive: exit writes it (flushSync).
        this.#timer.unref();
    }

    #take(): Buffer | undefined {
        if (this.#dropped > 0) {
            this.#queued.push(
                `${JSON.stringify({ level: 40, time: Date.now(), msg: `${this.#dropped} log lines dropped: standard output took nothing` })}\n`,
            );
            this.#dropped = 0;
        }

        if (this.#queued.length === 0) {
            return undefined;
        }

        const bytes = Buffer.from(this.#queued.join(''));
        this.#queued = [];
        this.#queuedCharacters = 0;
        return bytes;
    }

    #writeNext(): void {
        this.#pending ??= this.#take();
        const bytes = this.#pending;
        if (bytes === undefined) {
            return;
        }

        this.#writing = true;
        this.#write(this.#fd, bytes, (error, written) => {
            this.#writing = false;
            if (error?.code === 'EAGAIN') {
                setTimeout(() => this.#writeNext(), RETRY_MS).unref();
                return;
            }

            // A failed write (a closed pipe) loses its own batch only; lines logged meanwhile are tried next, and the
            // server goes on either way.
            const rest = error ? Buffer.alloc(0) : bytes.subarray(written);
            this.#pending = rest.length > 0 ? rest : undefined;
            if (this.#pending !== undefined) {
                this.#writeNext();
            } else if (this.#queued.length > 0 || this.#dropped > 0) {
                this.#schedule();
            }
        });
    }
}

let stdout: BatchedLineStream | undefined;

/** Standard output as a batched line stream, one per process (every server of a test run shares it), flushed at exit. */
export function batchedStdout(): BatchedLineStream {
    if (stdout === undefined) {
        const stream = new BatchedLineStream(1);
        process.once('exit', () => stream.flushSync());
        stdout = stream;
    }

    return stdout;
}
