import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { addressNetwork, FailureThrottle, SharedFailures, type ThrottleLimits, TooManyAttemptsError } from '../../lib/throttle.ts';
import { createTestServer } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const LIMITS: ThrottleLimits = {
    windowSeconds: 900,
    maxFailures: 5,
    maxFailuresPerAccount: 10,
    maxFailuresPerAddress: 20,
    backoffSeconds: 1,
};

/** A throttle on a clock the test moves. */
function throttleAt(limits: Partial<ThrottleLimits> = {}) {
    const clock = { now: 1_000_000 };
    const throttle = new FailureThrottle({ ...LIMITS, ...limits }, () => clock.now);
    return { throttle, clock };
}

function failures(throttle: FailureThrottle, account: string, address: string, count: number): void {
    for (let index = 0; index < count; index += 1) {
        throttle.begin(account, address).fail();
    }
}

function refusal(attempt: () => unknown): TooManyAttemptsError {
    try {
        attempt();
    } catch (error) {
        expect(error).to.be.an.instanceof(TooManyAttemptsError);
        return error as TooManyAttemptsError;
    }

    throw new Error('the attempt was not refused');
}

describe('failure throttle', () => {
    it('refuses a pair after its failures until the oldest of them leaves the window', () => {
        const { throttle, clock } = throttleAt();
        failures(throttle, 'Owner', '192.0.2.1', 5);
        expect(refusal(() => throttle.begin('owner', '192.0.2.1')).retryAfterSeconds).to.equal(900);
        clock.now += 600_000;
        expect(refusal(() => throttle.begin('OWNER ', '192.0.2.1')).retryAfterSeconds).to.equal(300);
        clock.now += 300_000;
        throttle.begin('owner', '192.0.2.1').succeed();
    });

    it('lets the account in from another address, and forgets a pair once it succeeds', () => {
        const { throttle } = throttleAt();
        failures(throttle, 'owner', '192.0.2.1', 5);
        throttle.begin('owner', '192.0.2.2').succeed();
        failures(throttle, 'owner', '192.0.2.2', 4);
        throttle.begin('owner', '192.0.2.2').succeed();
        failures(throttle, 'owner', '192.0.2.2', 4);
        throttle.begin('owner', '192.0.2.2').end();
    });

    it('limits an address across accounts, except for an account that signed in from it before', () => {
        const { throttle } = throttleAt({ maxFailuresPerAddress: 3 });
        throttle.begin('owner', '192.0.2.1').succeed();
        for (const account of ['a', 'b', 'c']) {
            throttle.begin(account, '192.0.2.1').fail();
        }

        refusal(() => throttle.begin('d', '192.0.2.1'));
        throttle.begin('owner', '192.0.2.1').succeed();
        throttle.begin('d', '192.0.2.2').end();
    });

    it('backs an account off after failures from many addresses, doubling, and never delays a known address', () => {
        const { throttle, clock } = throttleAt({ maxFailuresPerAccount: 3, backoffSeconds: 10 });
        throttle.begin('owner', '198.51.100.1').succeed();
        for (let index = 0; index < 3; index += 1) {
            throttle.begin('owner', `203.0.113.${index}`).fail();
        }

        expect(refusal(() => throttle.begin('owner', '203.0.113.50')).retryAfterSeconds).to.equal(10);
        throttle.begin('owner', '198.51.100.1').succeed();
        clock.now += 10_000;
        throttle.begin('owner', '203.0.113.51').fail();
        expect(refusal(() => throttle.begin('owner', '203.0.113.52')).retryAfterSeconds).to.equal(20);
        clock.now += 20_000;
        throttle.begin('owner', '203.0.113.53').fail();
        expect(refusal(() => throttle.begin('owner', '203.0.113.54')).retryAfterSeconds).to.equal(40);
        throttle.begin('owner', '198.51.100.1').succeed();
    });

    it('caps the back-off at the window, and forgets failures older than it', () => {
        const { throttle, clock } = throttleAt({ windowSeconds: 60, maxFailuresPerAccount: 1, backoffSeconds: 50 });
        throttle.begin('owner', '203.0.113.1').fail();
        clock.now += 50_000;
        throttle.begin('owner', '203.0.113.2').fail();
        expect(refusal(() => throttle.begin('owner', '203.0.113.3')).retryAfterSeconds).to.equal(60);
        clock.now += 60_000;
        throttle.begin('owner', '203.0.113.3').fail();
    });

    it('counts checks under way, so that a burst cannot pass the limits before they fail', () => {
        const { throttle } = throttleAt({ maxFailuresPerAddress: 4 });
        const burst = ['a', 'b', 'c', 'd'].map((account) => throttle.begin(account, '192.0.2.1'));
        expect(refusal(() => throttle.begin('e', '192.0.2.1')).retryAfterSeconds).to.equal(1);
        for (const attempt of burst) {
            attempt.end();
        }

        throttle.begin('e', '192.0.2.1').end();
    });

    it('lets a pair with no failures run checks side by side, and counts them once a failure is in', () => {
        const { throttle } = throttleAt({ maxFailures: 2 });
        throttle.begin('owner', '198.51.100.1').succeed();
        const side = [1, 2, 3].map(() => throttle.begin('owner', '198.51.100.1'));
        side.forEach((attempt) => attempt.succeed());
        throttle.begin('owner', '198.51.100.1').fail();
        const running = throttle.begin('owner', '198.51.100.1');
        refusal(() => throttle.begin('owner', '198.51.100.1'));
        running.end();
    });

    it('settles an attempt once, and guard counts a falsy result as a failure', async () => {
        const { throttle } = throttleAt({ maxFailures: 2 });
        const attempt = throttle.begin('owner', '192.0.2.1');
        attempt.fail();
        attempt.fail();
        attempt.end();
        expect(await throttle.guard('owner', '192.0.2.1', async () => false)).to.be.false();
        await expect(throttle.guard('owner', '192.0.2.1', async () => true)).to.reject(TooManyAttemptsError);
    });

    it('gives the check of a known address the high hashing priority, and a first factor leaves the pair as it was', async () => {
        const { throttle } = throttleAt({ maxFailures: 2 });
        expect(await throttle.guard('owner', '192.0.2.1', async (priority) => priority)).to.equal('normal');
        expect(await throttle.guard('owner', '192.0.2.1', async (priority) => priority)).to.equal('high');
        throttle.begin('other', '192.0.2.1').fail();
        await throttle.guard(
            'other',
            '192.0.2.1',
            async () => 'password right, code to follow',
            () => false,
        );
        throttle.begin('other', '192.0.2.1').fail();
        refusal(() => throttle.begin('other', '192.0.2.1'));
    });

    it('counts an IPv6 client under its /64, and an IPv4-mapped address as IPv4', () => {
        expect(addressNetwork('2001:db8:1:2:3:4:5:6')).to.equal('2001:db8:1:2::/64');
        expect(addressNetwork('2001:DB8::1')).to.equal('2001:db8:0:0::/64');
        expect(addressNetwork('::1')).to.equal('0:0:0:0::/64');
        expect(addressNetwork('64:ff9b::192.0.2.1')).to.equal('64:ff9b:0:0::/64');
        expect(addressNetwork('192.0.2.1')).to.equal('192.0.2.1');
        const { throttle } = throttleAt({ maxFailuresPerAddress: 2 });
        throttle.begin('a', '2001:db8:1:2::1').fail();
        throttle.begin('b', '2001:db8:1:2::ffff').fail();
        refusal(() => throttle.begin('c', '2001:db8:1:2:aaaa::1'));
        throttle.begin('c', '2001:db8:1:3::1').end();
    });

    it('keeps nothing for a refused attempt or a settled one with no failures left', () => {
        const { throttle, clock } = throttleAt({ windowSeconds: 60, maxFailuresPerAddress: 1 });
        throttle.begin('a', '192.0.2.1').fail();
        const tracked = throttle.trackedKeys;
        for (let index = 0; index < 50; index += 1) {
            refusal(() => throttle.begin(`account${index}`, '192.0.2.1'));
        }

        expect(throttle.trackedKeys).to.equal(tracked);
        throttle.begin('b', '192.0.2.2').succeed();
        expect(throttle.trackedKeys).to.equal(tracked);
        clock.now += 60_000;
        throttle.begin('a', '192.0.2.1').end();
        expect(throttle.trackedKeys).to.equal(0);
    });
});

describe('FailureThrottle shared through the database', () => {
    /** Throttles on one fresh database and one clock, as processes of several instances would be. */
    async function onOneDatabase(run: (scene: { shared: (scope?: string) => FailureThrottle; clock: { now: number } }) => Promise<void>) {
        const test = await createTestServer();
        try {
            const clock = { now: 5_000_000 };
            await run({
                clock,
                shared: (scope = 'test') => new FailureThrottle(LIMITS, () => clock.now, new SharedFailures(test.database.knex, scope)),
            });
        } finally {
            await test.cleanup();
        }
    }

    it('counts the failures of every throttle on one database, and remembers them across a restart', async () => {
        await onOneDatabase(async ({ shared, clock }) => {
            const [one, two] = [shared(), shared()];
            const wrong = async (throttle: FailureThrottle) =>
                await throttle.guard('bo@example.com', '198.51.100.8', () => Promise.resolve(false));
            for (let attempt = 0; attempt < 5; attempt += 1) {
                await wrong(attempt % 2 === 0 ? one : two);
            }

            await expect(wrong(two)).to.reject(TooManyAttemptsError);
            await expect(wrong(shared())).to.reject(TooManyAttemptsError);
            // Another scope (the other service) counts its own.
            expect(await wrong(shared('other'))).to.be.false();

            // Past the window, the failures are forgotten everywhere.
            clock.now += LIMITS.windowSeconds * 1000 + 1;
            expect(await wrong(one)).to.be.false();
        });
    });

    it("shares the owner's address: after a sign-in through one, others' failures do not keep the owner out of another", async () => {
        await onOneDatabase(async ({ shared }) => {
            const [one, two] = [shared(), shared()];
            expect(await one.guard('cy@example.com', '192.0.2.50', () => Promise.resolve(true))).to.be.true();
            // Someone else spends the account's and the address's failures from elsewhere.
            for (let attempt = 0; attempt < LIMITS.maxFailuresPerAccount + 2; attempt += 1) {
                await one.guard('cy@example.com', `203.0.113.${attempt}`, () => Promise.resolve(false)).catch(() => false);
            }

            const priorities: string[] = [];
            expect(
                await two.guard('cy@example.com', '192.0.2.50', (priority) => Promise.resolve(priorities.push(priority) > 0)),
            ).to.be.true();
            expect(priorities).to.equal(['high']);
        });
    });
});
