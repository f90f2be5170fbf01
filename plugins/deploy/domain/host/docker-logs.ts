/**
 * Docker's container logs as lines. Without a TTY the engine multiplexes stdout and stderr into frames:
 * an 8-byte header (stream type, three zero bytes, payload size as a big-endian uint32) and the payload.
 * With a TTY there is one raw stream, and the terminal ends lines with \r\n.
 */
import { StringDecoder } from 'node:string_decoder';

export type LogStream = 'stdout' | 'stderr';

export interface LogLine {
    stream: LogStream;
    /** The engine's RFC 3339 timestamp of the line (nanoseconds kept), or null when it carried none. */
    time: string | null;
    text: string;
}

export interface LogChunk {
    stream: LogStream;
    payload: Buffer;
}

const HEADER_BYTES = 8;
const STDERR = 2;

/** Splits a multiplexed buffer into its frames; a frame cut short at the end keeps what arrived. */
export function demultiplex(buffer: Buffer): LogChunk[] {
    const chunks: LogChunk[] = [];
    let offset = 0;
    while (offset + HEADER_BYTES <= buffer.length) {
        const stream: LogStream = buffer[offset] === STDERR ? 'stderr' : 'stdout';
        const size = buffer.readUInt32BE(offset + 4);
        const start = offset + HEADER_BYTES;
        chunks.push({ stream, payload: buffer.subarray(start, Math.min(start + size, buffer.length)) });
        offset = start + size;
    }

    return chunks;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ?/;

function toLine(stream: LogStream, raw: string): LogLine {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const match = TIMESTAMP.exec(text);
    return match ? { stream, time: match[1] ?? null, text: text.slice(match[0].length) } : { stream, time: null, text };
}

/**
 * Lines of the two streams as their bytes arrive. Each stream is decoded on its own, so that a line (or a UTF-8
 * character) split over two frames of one stream is joined again even when the other stream's frames come between.
 */
class StreamLines {
    readonly #decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    readonly #pending: Record<LogStream, string> = { stdout: '', stderr: '' };

    take(stream: LogStream, payload: Buffer): LogLine[] {
        const parts = (this.#pending[stream] + this.#decoders[stream].write(payload)).split('\n');
        this.#pending[stream] = parts.pop() ?? '';
        return parts.map((part) => toLine(stream, part));
    }

    /** The last line of each stream that had no newline. */
    end(): LogLine[] {
        return (['stdout', 'stderr'] as const).flatMap((stream) => {
            const rest = this.#pending[stream] + this.#decoders[stream].end();
            this.#pending[stream] = '';
            return rest === '' ? [] : [toLine(stream, rest)];
        });
    }
}

/** The chunks' lines in arrival order. */
export function chunksToLines(chunks: LogChunk[]): LogLine[] {
    const lines = new StreamLines();
    return [...chunks.flatMap(({ stream, payload }) => lines.take(stream, payload)), ...lines.end()];
}

/** The lines of a `docker logs` answer: demultiplexed when the container has no TTY, one raw stdout stream when it has. */
export function logLines(buffer: Buffer, tty: boolean): LogLine[] {
    return chunksToLines(tty ? [{ stream: 'stdout', payload: buffer }] : demultiplex(buffer));
}

/**
 * The lines of a followed `docker logs` stream, as its bytes arrive: frames cut anywhere (the header too) are put
 * together again, and a line split over chunks is given once whole.
 */
export class LogLineReader {
    readonly #tty: boolean;
    readonly #lines = new StreamLines();
    #frames = Buffer.alloc(0);

    constructor(tty: boolean) {
        this.#tty = tty;
    }

    /** The whole lines the chunk completes. */
    push(chunk: Buffer): LogLine[] {
        if (this.#tty) {
            return this.#lines.take('stdout', chunk);
        }

        this.#frames = Buffer.concat([this.#frames, chunk]);
        const lines: LogLine[] = [];
        while (this.#frames.length >= HEADER_BYTES) {
            const size = this.#frames.readUInt32BE(4);
            if (this.#frames.length < HEADER_BYTES + size) {
                break;
            }

            const stream: LogStream = this.#frames[0] === STDERR ? 'stderr' : 'stdout';
            lines.push(...this.#lines.take(stream, this.#frames.subarray(HEADER_BYTES, HEADER_BYTES + size)));
            this.#frames = this.#frames.subarray(HEADER_BYTES + size);
        }

        return lines;
    }

    /** What is left once the stream has ended: a last line without its newline. */
    end(): LogLine[] {
        return this.#lines.end();
    }
}
