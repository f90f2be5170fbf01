import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { HashingBusyError, HashingPool, hashPassword, passwordHashing, verifyPassword } from '../../lib/passwords.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** Work that finishes when the test says so, recording the order it started in. */
function controlledWork(started: string[]) {
    const finishers = new Map<string, () => void>();
    const work = (name: string) => () =>
        new Promise<string>((resolve) => {
            started.push(name);
            finishers.set(name, () => resolve(name));
        });
    const finish = async (name: string) => {
        finishers.get(name)?.();
        // Let the pool hand the slot on before the test looks.
        await new Promise((resolve) => setImmediate(resolve));
    };
    return { work, finish };
}

describe('password hashing pool', () => {
    it('runs at most its limit at once, the waiting ones in order, the high ones first', async () => {
        const pool = new HashingPool(2, 10);
        const started: string[] = [];
        const { work, finish } = controlledWork(started);
        const runs = ['n1', 'n2', 'n3', 'n4'].map((name) => pool.run(work(name)));
        const high = pool.run(work('h1'), 'high');
        await new Promise((resolve) => setImmediate(resolve));
        expect(started).to.equal(['n1', 'n2']);
        expect([pool.active, pool.waiting]).to.equal([2, 3]);

        await finish('n1');
        expect(started).to.equal(['n1', 'n2', 'h1']);
        await finish('h1');
        await finish('n2');
        expect(started).to.equal(['n1', 'n2', 'h1', 'n3', 'n4']);
        await finish('n3');
        await finish('n4');
        expect(await Promise.all([...runs, high])).to.equal(['n1', 'n2', 'n3', 'n4', 'h1']);
        expect([pool.active, pool.waiting, pool.peak, pool.runs]).to.equal([0, 0, 2, 5]);
    });

    it('refuses normal work past the waiting limit at once, but never high work', async () => {
        const pool = new HashingPool(1, 1);
        const started: string[] = [];
        const { work, finish } = controlledWork(started);
        const first = pool.run(work('a'));
        const second = pool.run(work('b'));
        await expect(pool.run(work('c'))).to.reject(HashingBusyError);
        const high = pool.run(work('h'), 'high');
        await finish('a');
        await finish('h');
        await finish('b');
        expect(await Promise.all([first, second, high])).to.equal(['a', 'b', 'h']);
        expect(started).to.equal(['a', 'h', 'b']);
    });

    it('frees the slot when the work fails', async () => {
        const pool = new HashingPool(1, 10);
        await expect(pool.run(() => Promise.reject(new Error('broken')))).to.reject('broken');
        expect(await pool.run(async () => 'next')).to.equal('next');
        expect(pool.active).to.equal(0);
    });

    it('hashes with argon2id through the process pool, and a bad hash is only a wrong password', async () => {
        passwordHashing.resetStatistics();
        const hash = await hashPassword('a-long-password');
        expect(hash).to.startWith('$argon2id$');
        expect(await verifyPassword(hash, 'a-long-password')).to.be.true();
        expect(await verifyPassword(hash, 'another-password', 'high')).to.be.false();
        expect(await verifyPassword('not-a-hash', 'a-long-password')).to.be.false();
        expect(await verifyPassword('', 'a-long-password')).to.be.false();
        expect(passwordHashing.runs).to.equal(4);
        expect(passwordHashing.limit).to.be.within(1, 3);
    });
});
