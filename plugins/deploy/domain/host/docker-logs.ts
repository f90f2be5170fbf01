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
 * The chunks' lines in arrival order. Each stream is decoded on its own, so that a line (or a UTF-8 character)
 * split over two frames of one stream is joined again even when the other stream's frames come between.
 */
export function chunksToLines(chunks: LogChunk[]): LogLine[] {
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const pending: Record<LogStream, string> = { stdout: '', stderr: '' };
    const lines: LogLine[] = [];
    for (const { stream, payload } of chunks) {
        const parts = (pending[stream] + decoders[stream].write(payload)).split('\n');
        pending[stream] = parts.pop() ?? '';
        lines.push(...parts.map((part) => toLine(stream, part)));
    }

    for (const stream of ['stdout', 'stderr'] as const) {
        const rest = pending[stream] + decoders[stream].end();
        if (rest !== '') {
            lines.push(toLine(stream, rest));
        }
    }

    return lines;
}

/** The lines of a `docker logs` answer: demultiplexed when the container has no TTY, one raw stdout stream when it has. */
export function logLines(buffer: Buffer, tty: boolean): LogLine[] {
    return chunksToLines(tty ? [{ stream: 'stdout', payload: buffer }] : demultiplex(buffer));
}
