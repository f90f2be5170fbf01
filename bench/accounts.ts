import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import { ARGON2_OPTIONS } from '../plugins/git/domain/identity/passwords.ts';
import {
    alternatingLoads,
    type BenchFigure,
    comparisonFigure,
    compareWithBareRoute,
    describeLoad,
    load,
    ROOT_DIR,
    startGatehouse,
    startProcess,
} from './harness.ts';

const ADMIN = { email: 'bench@example.com', name: 'Bench', password: 'bench-password-1' };

function cookieValue(setCookies: string[], name: string): string {
    const header = setCookies.find((cookie) => cookie.startsWith(`${name}=`)) ?? '';
    return header.slice(name.length + 1).split(';')[0] ?? '';
}

/** Sets the first administrator up and signs in; returns the cookies a browser would now hold. */
async function signIn(root: string, dataDir: string): Promise<{ csrf: string; session: string }> {
    const status = await fetch(`${root}/api/setup/status`);
    const csrf = cookieValue(status.headers.getSetCookie(), 'dp_csrf');
    const headers = { 'content-type': 'application/json', 'x-csrf-token': csrf, cookie: `dp_csrf=${csrf}` };
    const token = Fs.readFileSync(Path.join(dataDir, 'setup-token'), 'utf8').trim();
    const setup = await fetch(`${root}/api/setup`, { method: 'POST', headers, body: JSON.stringify({ token, ...ADMIN }) });
    if (setup.status !== 201) {
        throw new Error(`setup: ${setup.status}`);
    }

    const login = await fetch(`${root}/api/auth/login`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
    });
    return { csrf, session: cookieValue(login.headers.getSetCookie(), 'dp_session') };
}

/**
 * GET /api/auth/me against a bare hapi server that does the same work for it (the cookie, the session query) and
 * nothing else: what Gatehouse's own layers cost on a request that must read the database. Recorded beside the
 * issue's figure, which compares with a route answering the JSON from memory.
 */
async function sameWorkComparison(root: string, dataDir: string, cookie: string): Promise<BenchFigure> {
    const bare = await startProcess(Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-session-server.ts'), { DATA_DIR: dataDir }, '/ready');
    try {
        const [baseline, served] = await alternatingLoads(
            { url: `http://127.0.0.1:${bare.port}/bare`, headers: { cookie } },
            { url: `${root}/api/auth/me`, headers: { cookie } },
        );
        if (baseline.non2xx > 0 || served.non2xx > 0) {
            throw new Error(`auth/me same-work comparison: ${baseline.non2xx} and ${served.non2xx} non-2xx answers`);
        }

        const ratio = served.requestsPerSecond / baseline.requestsPerSecond;
        return {
            name: 'GET /api/auth/me with a session, against a bare route doing the same session lookup',
            measured: describeLoad(served),
            baseline: `${baseline.requestsPerSecond.toFixed(0)} req/s from a bare hapi server with @hapi/cookie and the same session query`,
            ratio,
            target: '>= 0.6, against the same work',
            met: ratio >= 0.6,
            notes: "what Gatehouse's loader, CSRF, roles, error shapes and request logging cost on top of the same work",
        };
    } finally {
        await bare.stop();
    }
}

/** GET /api/auth/me with a session against a bare hapi route with the same JSON; and the login rate. */
export async function benchAccounts(): Promise<BenchFigure[]> {
    const gatehouse = await startGatehouse();
    try {
        const root = `http://127.0.0.1:${gatehouse.port}`;
        const { csrf, session } = await signIn(root, gatehouse.dataDir);
        const cookie = `dp_csrf=${csrf}; dp_session=${session}`;
        const comparison = await compareWithBareRoute(`${root}/api/auth/me`, { cookie });
        const meFigure: BenchFigure = comparisonFigure('GET /api/auth/me with a session', comparison, {
            target: '>= 0.6, against JSON from memory',
            met: comparison.ratio >= 0.6,
            notes: 'session looked up in the database on every request; the bare route answers the same JSON from memory',
        });

        const sameWork = await sameWorkComparison(root, gatehouse.dataDir, cookie);

        const logins = await load({
            url: `${root}/api/auth/login`,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, cookie: `dp_csrf=${csrf}` },
            body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
        });
        if (logins.errors > 0 || logins.non2xx > 0) {
            throw new Error(`login: ${logins.errors} errors, ${logins.non2xx} non-2xx`);
        }

        const cores = Os.cpus().length;
        const loginFigure: BenchFigure = {
            name: 'POST /api/auth/login (argon2id verify)',
            measured: `${logins.requestsPerSecond.toFixed(1)} logins/s on ${cores} cores, ${(logins.requestsPerSecond / cores).toFixed(1)} per core (p50 ${logins.p50} ms)`,
            baseline: `argon2id m=${ARGON2_OPTIONS.memoryCost} KiB, t=${ARGON2_OPTIONS.timeCost}, p=${ARGON2_OPTIONS.parallelism}`,
            ratio: 1,
            target: 'recorded',
            met: true,
            notes: 'argon2 hashes on libuv worker threads, so logins use every core',
        };
        return [meFigure, sameWork, loginFigure];
    } finally {
        await gatehouse.stop();
    }
}
