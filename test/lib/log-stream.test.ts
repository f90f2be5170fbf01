/**
 * Log lines go out in batches, in order, whole: through a file descriptor of a pipe read here, and through writes
 * that answer partly, refuse for a while (EAGAIN) or fail.
 */
import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { BatchedLineStream } from '../../lib/log-stream.ts';
import { waitUntil } from '../helpers/wait.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

type Done = (error: NodeJS.ErrnoException | null, written: number) => void;

/** A descriptor's writes, recorded; each answers as `answer` says (all written, by default). */
function recordingWrites(answer: (bytes: Buffer, call: number) => { error?: string; written?: number } = () => ({})) {
    const writes: string[] = [];
    const write = (_fd: number, bytes: Buffer, done: Done) => {
        const { error, written = bytes.length } = answer(bytes, writes.length);
        writes.push(bytes.subarray(0, error ? 0 : written).toString());
        setImmediate(() => done(error ? Object.assign(new Error(error), { code: error }) : null, error ? 0 : written));
    };
    return { writes, write };
}

describe('BatchedLineStream', () => {
    it('writes the lines of one turn of the event loop in one write, and those that come during it in the next', async () => {
        const { writes, write } = recordingWrites();
        const stream = new BatchedLineStream(99, { write, batchMs: 1 });
        stream.write('one\n');
        stream.write('two\n');
        expect(writes).to.equal([]);
        await waitUntil('the first batch is written', () => writes.length === 1);
        stream.write('three\n');
        stream.write('four\n');
        await waitUntil('the second batch is written', () => writes.length === 2);
        expect(writes).to.equal(['one\ntwo\n', 'three\nfour\n']);
    });

    it('writes the rest of a batch the descriptor took only part of, before anything newer', async () => {
        const { writes, write } = recordingWrites((_bytes, call) => (call === 0 ? { written: 3 } : {}));
        const stream = new BatchedLineStream(99, { write, batchMs: 1 });
        stream.write('first line\n');
        await waitUntil('the first batch is written', () => writes.length >= 1);
        stream.write('second\n');
        await waitUntil('both lines are written whole', () => writes.join('') === 'first line\nsecond\n');
        expect(writes[0]).to.equal('fir');
    });

    it('tries again when a non-blocking descriptor is full, and drops only the batch whose write failed', async () => {
        const later: Array<() => void> = [];
        const { writes, write } = recordingWrites((bytes, call) => {
            if (call === 0) return { error: 'EAGAIN' };
            if (!bytes.toString().startsWith('lost')) return {};
            // A line logged while the failing write is out: it is not part of the lost batch.
            later.forEach((log) => log());
            return { error: 'EPIPE' };
        });
        const stream = new BatchedLineStream(99, { write, batchMs: 1 });
        later.push(() => stream.write('after\n'));
        stream.write('kept\n');
        await waitUntil('the refused batch is written again', () => writes.includes('kept\n'));
        stream.write('lost\n');
        await waitUntil('a line logged during the failed write is written', () => writes.includes('after\n'));
        expect(writes).to.equal(['', 'kept\n', '', 'after\n']);
    });

    it('writes what is still queued synchronously when asked (as at exit)', () => {
        const written: string[] = [];
        const stream = new BatchedLineStream(99, {
            write: () => {
                throw new Error('no asynchronous write expected');
            },
            writeSync: (_fd, bytes) => {
                written.push(bytes.subarray(0, 4).toString());
                return Math.min(4, bytes.length);
            },
        });
        stream.write('queued\n');
        stream.write('lines\n');
        stream.flushSync();
        expect(written.join('')).to.equal('queued\nlines\n');
        stream.flushSync();
        expect(written.join('')).to.equal('queued\nlines\n');
    });

    it("delivers every line, in order, through a real pipe, and the last ones at the process's exit", async () => {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-log-stream-'));
        const script = Path.join(dir, 'writer.ts');
        const module = Path.resolve('lib/log-stream.ts');
        Fs.writeFileSync(
            script,
            `import { batchedStdout } from ${JSON.stringify(module)};
const out = batchedStdout();
for (let index = 0; index < 5000; index += 1) out.write(\`line \${index}\\n\`);
setImmediate(() => { for (let index = 5000; index < 5010; index += 1) out.write(\`line \${index}\\n\`); process.exit(0); });
`,
        );
        try {
            const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
            let output = '';
            child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
            const code = await new Promise((resolve) => child.once('close', resolve));
            expect(code).to.equal(0);
            expect(output.split('\n').filter(Boolean)).to.equal(Array.from({ length: 5010 }, (_, index) => `line ${index}`));
        } finally {
            Fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
