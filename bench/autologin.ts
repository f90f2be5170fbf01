/**
 * The auto-login benchmark: time from a browser's request of `/__svc/autologin` to the app's page, signed in, against
 * the same app's own form login done directly (its login page fetched, the form posted, the redirect followed), same
 * run. The app is Debian's DokuWiki behind nginx and the authentik stand-in's forward auth; the visitor has signed in
 * at the provider once, before either is timed, and starts each round without a DokuWiki session.
 */
import { findLoginForm, formBody } from '../plugins/sso/autologin/adapters/form.ts';
import { freePort } from '../test/helpers/server.ts';
import { startAuthentikStandIn } from '../test/support/authentik/index.ts';
import { DOKUWIKI, DOKUWIKI_ADMIN, debianImage } from '../test/support/debian-images.ts';
import { removeProjects } from '../test/support/images.ts';
import { type RunningServices, startServices } from '../test/support/services.ts';
import { lastHop, signInThroughProvider, Visitor, type VisitorResponse } from '../test/support/visitor.ts';
import { followRun, signIn, startRun, wallClock } from './app-runs.ts';
import { type BenchFigure, median, startGatehouse } from './harness.ts';

const APP = 'benchwiki';
const BASE_DOMAIN = 'apps.test';
const ROUNDS = Number(process.env.BENCH_AUTOLOGIN_ROUNDS ?? 15);
const TARGET_RATIO = 1.5;
const LOGIN_PATH = '/dokuwiki/doku.php?do=login';
const SIGNED_IN = `Logged in as: <bdi>${DOKUWIKI_ADMIN.name}</bdi>`;

const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Forgets the app's own cookies, keeping the provider's forward-auth session. */
function forgetAppSession(visitor: Visitor, host: string): void {
    const jar = visitor.cookiesOf(host);
    for (const name of [...jar.keys()].filter((name) => !name.startsWith('authentik_proxy'))) jar.delete(name);
}

function signedInPage(hops: VisitorResponse[], what: string): void {
    const page = lastHop(hops);
    if (page.status !== 200 || !page.body.includes(SIGNED_IN)) {
        throw new Error(`${what} did not end signed in: ${page.status} at ${page.url}`);
    }
}

/** The app's own login, as a browser does it through nginx: the page, the form posted, the redirect followed. */
async function formLogin(visitor: Visitor, origin: string): Promise<VisitorResponse[]> {
    const page = await visitor.request('GET', `${origin}${LOGIN_PATH}`);
    const form = findLoginForm(page.body);
    if (!form) throw new Error(`no login form at ${LOGIN_PATH}`);
    const { fields } = formBody(form, DOKUWIKI_ADMIN.username, DOKUWIKI_ADMIN.password);
    const action = new URL(form.attribs.action || page.url, page.url).href;
    const posted = await visitor.request('POST', action, Object.fromEntries(fields));
    return [page, posted, ...(posted.location ? await visitor.follow(posted.location) : [])];
}

async function timed(work: () => Promise<VisitorResponse[]>, what: string): Promise<number> {
    const startedAt = wallClock();
    const hops = await work();
    const elapsed = wallClock() - startedAt;
    signedInPage(hops, what);
    return elapsed;
}

export async function benchAutologin(): Promise<BenchFigure> {
    const cleanups: Array<() => Promise<void> | void> = [];
    try {
        const image = debianImage(DOKUWIKI);
        const services: RunningServices = await startServices();
        cleanups.push(() => services.stop());
        const authentik = await startAuthentikStandIn();
        cleanups.push(() => authentik.close());
        authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
        authentik.addUser({ username: 'reader', password: 'reader-password' });
        const token = authentik.addToken({ username: 'operator', identifier: 'bench-api' });
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        const gatehouse = await startGatehouse({ ...withoutAcme, BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await freePort()) });
        cleanups.push(() => gatehouse.stop());
        cleanups.push(() => removeProjects([APP]));
        const admin = await signIn(`http://127.0.0.1:${gatehouse.port}`, gatehouse.dataDir);
        await admin.put('/api/admin/idp', { url: authentik.url, token });
        const [repository = '', tag = ''] = image.split(':');
        const created = await admin.post('/api/apps', { name: APP, image: repository, tag });
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = ['services:', '  web:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        await admin.put(`/api/apps/${APP}/draft`, { compose });
        for (const [path, payload] of [
            [`/api/apps/${APP}/deploy`, {}],
            [
                `/api/apps/${APP}/sso`,
                {
                    account: 'autologin',
                    sharedUser: DOKUWIKI_ADMIN.username,
                    sharedPassword: DOKUWIKI_ADMIN.password,
                    login: { adapter: 'form', path: LOGIN_PATH },
                },
            ],
        ] as const) {
            const run = await followRun(admin, await startRun(admin, 'post', path, payload));
            if (run.state !== 'succeeded') throw new Error(`${path}: ${run.state} ${run.error}`);
        }

        const host = `${APP}.${BASE_DOMAIN}:${services.exports.NGINX_HTTPS_PORT}`;
        const origin = `https://${host}`;
        const visitor = new Visitor(BASE_DOMAIN);
        signedInPage(
            await signInThroughProvider(visitor, `${origin}/__svc/autologin`, 'reader', 'reader-password'),
            'the first auto-login',
        );
        const autologins: number[] = [];
        const logins: number[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
            const sides = [
                async () => autologins.push(await timed(() => visitor.follow(`${origin}/__svc/autologin`), 'the auto-login')),
                async () => logins.push(await timed(() => formLogin(visitor, origin), "the app's own login")),
            ];
            for (const side of round % 2 === 0 ? sides : sides.reverse()) {
                forgetAppSession(visitor, host);
                await side();
            }
        }

        const ratio = median(autologins) / median(logins);
        return {
            name: 'GET /__svc/autologin to the app signed in (DokuWiki, form adapter)',
            measured: `median ${ms(median(autologins))} (${autologins.map(ms).join(', ')})`,
            baseline: `the app's own form login through nginx (login page, POST, redirect to the page): median ${ms(median(logins))} (${logins.map(ms).join(', ')})`,
            ratio,
            target: `<= ${TARGET_RATIO}`,
            met: ratio <= TARGET_RATIO,
            notes:
                `${ROUNDS} rounds each, alternating which goes first, each from no DokuWiki session with the provider's session kept. ` +
                "The auto-login's time includes nginx's forward-auth check, Gatehouse fetching the login page and posting the " +
                "form to the app (server side), re-issuing the session and the redirect to the app's page; both end on " +
                `DokuWiki's page showing "Logged in as". Debian's DokuWiki image (debootstrap), Apache with mod_php, over HTTPS on 127.0.0.1.`,
        };
    } finally {
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    }
}
