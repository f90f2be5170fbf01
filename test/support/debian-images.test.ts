// needs: docker
import { type ChildProcess, spawn } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { temporaryDirectory } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
    APACHE_SSO,
    DOKUWIKI,
    DOKUWIKI_ADMIN,
    debianImage,
    debianImageTag,
    debianMirror,
    lockExclusively,
    lockPath,
} from './debian-images.ts';
import { docker } from './images.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

// A first build takes one to three minutes per image and blocks the event loop (the builder is synchronous);
// hooks get the runner's default timeout (120 s) unless given their own.
const BUILD_TIMEOUT = 900_000;

const started: string[] = [];

interface Running {
    name: string;
    url: string;
}

/** Runs `image` under a name no other test uses, published on a free port of 127.0.0.1 only. */
function runContainer(image: string, volumes: string[] = []): Running {
    const name = `gatehouse-debimg-test-${Crypto.randomBytes(4).toString('hex')}`;
    const mounts = volumes.flatMap((volume) => ['-v', volume]);
    docker('run', '-d', '--name', name, '-p', '127.0.0.1::80', ...mounts, image);
    started.push(name);
    const published = docker('port', name, '80/tcp').split('\n')[0] ?? '';
    return { name, url: `http://${published}` };
}

async function answers(url: string): Promise<Response | false> {
    try {
        return await fetch(url, { redirect: 'manual' });
    } catch {
        return false;
    }
}

/** Waits until the container answers HTTP at all (Apache takes a moment to start). */
async function untilAnswering(container: Running): Promise<void> {
    await waitUntil(`${container.name} answers HTTP`, () => answers(`${container.url}/`), { timeoutMs: 60_000 });
}

after(() => {
    for (const name of started) {
        docker('rm', '-f', name);
    }
});

describe('debian images: the tag', () => {
    it('takes the mirror from the stanza whose suites include bookworm, else the first', () => {
        const folder = temporaryDirectory('gatehouse-debimg-sources-');
        const file = Path.join(folder, 'debian.sources');
        Fs.writeFileSync(
            file,
            'Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n\n' +
                'Types: deb\n# a comment\nURIs: http://mirror.example/debian http://other.example/debian\n' +
                'Suites: bookworm bookworm-updates\nComponents: main\n',
        );
        expect(debianMirror(file)).to.equal('http://mirror.example/debian');
        Fs.writeFileSync(file, 'Types: deb\nURIs: http://first.example/debian\nSuites: trixie\n');
        expect(debianMirror(file)).to.equal('http://first.example/debian');
        Fs.rmSync(folder, { recursive: true, force: true });
    });

    it('is the name and 16 hex digits, the same for the same spec and different for a changed one', () => {
        const tag = debianImageTag(APACHE_SSO);
        expect(tag).to.match(/^gatehouse-test\/apache-sso:[0-9a-f]{16}$/);
        const reordered = { ...APACHE_SSO, packages: [...APACHE_SSO.packages].reverse() };
        expect(debianImageTag(reordered)).to.equal(tag);
        expect(debianImageTag({ ...APACHE_SSO, env: { EXTRA: '1' } })).to.not.equal(tag);
        expect(debianImageTag({ ...APACHE_SSO, commands: [] })).to.not.equal(tag);
        expect(debianImageTag({ ...APACHE_SSO, files: { '/x': 'y' } })).to.not.equal(tag);
        expect(debianImageTag({ ...APACHE_SSO, expose: [8080] })).to.not.equal(tag);
        expect(debianImageTag(APACHE_SSO, 'http://other.example/debian')).to.not.equal(tag);
    });
});

describe('debian images: the build lock', () => {
    let child: ChildProcess | undefined;

    after(() => {
        child?.kill();
    });

    it('makes another process wait until the holder lets go', async () => {
        const key = `lock-test-${Crypto.randomBytes(4).toString('hex')}`;
        const marker = Path.join(temporaryDirectory('gatehouse-debimg-lock-'), 'entered');
        const release = lockExclusively(key);
        const module = new URL('./debian-images.ts', import.meta.url).href;
        const code = `import { withBuildLock } from ${JSON.stringify(module)};
            import Fs from 'node:fs';
            withBuildLock(${JSON.stringify(key)}, () => Fs.writeFileSync(${JSON.stringify(marker)}, 'in'));`;
        let output = '';
        child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
            stdio: ['ignore', 'ignore', 'pipe'],
        });
        child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
        try {
            await waitUntil('the other process says it waits', () => output.includes('waiting for'), {
                timeoutMs: 30_000,
            });
            expect(Fs.existsSync(marker)).to.be.false();
        } finally {
            release();
        }

        await waitUntil('the other process got the lock', () => Fs.existsSync(marker), { timeoutMs: 30_000 });
        Fs.rmSync(Path.dirname(marker), { recursive: true, force: true });
        Fs.rmSync(lockPath(key), { force: true });
    });
});

describe('debian images: Apache with the SSO modules', { timeout: BUILD_TIMEOUT }, () => {
    let image: string;
    let apache: Running;
    let configured: Running;
    let folder: string;

    before({ timeout: BUILD_TIMEOUT }, async () => {
        image = debianImage(APACHE_SSO);
        folder = temporaryDirectory('gatehouse-debimg-apache-');
        const config = Path.join(folder, 'method.conf');
        Fs.writeFileSync(
            config,
            'Header always set X-Gatehouse-Config "mounted"\n' +
                'RewriteEngine On\nRewriteRule ^/rewritten$ /index.html [PT]\n' +
                '<Location /private>\n    Require all denied\n</Location>\n',
        );
        apache = runContainer(image);
        configured = runContainer(image, [`${config}:/etc/apache2/conf-enabled/zz-method.conf:ro`]);
        await untilAnswering(apache);
        await untilAnswering(configured);
    });

    after(() => {
        Fs.rmSync(folder, { recursive: true, force: true });
    });

    it('serves the index page', async () => {
        const response = await fetch(`${apache.url}/`);
        expect(response.status).to.equal(200);
        expect(await response.text()).to.equal('apache sso test app\n');
    });

    it('runs /cgi-bin/whoami, which prints the identity headers the client sent', async () => {
        const response = await fetch(`${apache.url}/cgi-bin/whoami`, {
            headers: { 'X-idp-username': 'alice', 'Remote-User': 'alice@example.test', Cookie: 'session=hidden' },
        });
        expect(response.status).to.equal(200);
        expect(response.headers.get('content-type') ?? '').to.startWith('text/plain');
        const body = await response.text();
        expect(body).to.contain('REMOTE_USER=\n');
        expect(body).to.contain('HTTP_X_IDP_USERNAME=alice\n');
        expect(body).to.contain('HTTP_REMOTE_USER=alice@example.test\n');
        expect(body).to.not.contain('hidden');
    });

    it('loads the OpenID Connect, SAML, headers, rewrite and CGI modules', () => {
        const modules = docker('exec', apache.name, 'apache2ctl', '-M');
        for (const module of ['auth_openidc', 'auth_mellon', 'headers', 'rewrite', 'cgid']) {
            expect(modules).to.contain(`${module}_module`);
        }
    });

    it('applies a config file mounted into conf-enabled', async () => {
        const rewritten = await fetch(`${configured.url}/rewritten`);
        expect(rewritten.status).to.equal(200);
        expect(rewritten.headers.get('x-gatehouse-config')).to.equal('mounted');
        expect(await rewritten.text()).to.equal('apache sso test app\n');
        expect((await fetch(`${configured.url}/private`)).status).to.equal(403);
        expect((await fetch(`${apache.url}/rewritten`)).status).to.equal(404);
    });

    it('answers the same image for the same spec again, without a rebuild', () => {
        const before = docker('image', 'inspect', '-f', '{{.Id}} {{.Created}}', image);
        const startedAt = Date.now();
        expect(debianImage({ ...APACHE_SSO, packages: [...APACHE_SSO.packages].reverse() })).to.equal(image);
        expect(docker('image', 'inspect', '-f', '{{.Id}} {{.Created}}', image)).to.equal(before);
        console.log(`debian-images: cache hit for ${image} in ${Date.now() - startedAt} ms`);
    });
});

/** Cookies a browser would keep, from the responses seen so far. */
class CookieJar {
    private readonly cookies = new Map<string, string>();

    keep(response: Response): void {
        for (const line of response.headers.getSetCookie()) {
            const pair = line.split(';')[0] ?? '';
            const index = pair.indexOf('=');
            const [name, value] = [pair.slice(0, index).trim(), pair.slice(index + 1).trim()];
            if (value === '' || value === 'deleted') {
                this.cookies.delete(name);
            } else {
                this.cookies.set(name, value);
            }
        }
    }

    header(): string {
        return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
}

describe('debian images: DokuWiki', { timeout: BUILD_TIMEOUT }, () => {
    let wiki: Running;

    before({ timeout: BUILD_TIMEOUT }, async () => {
        wiki = runContainer(debianImage(DOKUWIKI));
        await untilAnswering(wiki);
    });

    const loginUrl = () => `${wiki.url}/dokuwiki/doku.php?id=start&do=login`;
    const pageUrl = () => `${wiki.url}/dokuwiki/doku.php?id=start`;

    /** Opens the login form, posts the credentials with its sectok and cookies, and follows the redirect. */
    async function signIn(password: string): Promise<{ status: number; page: string; jar: CookieJar }> {
        const jar = new CookieJar();
        const form = await fetch(loginUrl());
        jar.keep(form);
        const sectok = /<input type="hidden" name="sectok" value="([^"]*)"/.exec(await form.text())?.[1];
        expect(sectok).to.be.a.string();
        const fields = { sectok: sectok ?? '', id: 'start', do: 'login', u: DOKUWIKI_ADMIN.username, p: password };
        const posted = await fetch(loginUrl(), {
            method: 'POST',
            redirect: 'manual',
            headers: { Cookie: jar.header(), 'Content-Type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields),
        });
        jar.keep(posted);
        const location = posted.headers.get('location');
        if (location === null) {
            return { status: posted.status, page: await posted.text(), jar };
        }

        return { status: posted.status, page: await openPage(new URL(location, wiki.url).href, jar), jar };
    }

    async function openPage(url: string, jar: CookieJar): Promise<string> {
        const response = await fetch(url, { redirect: 'manual', headers: { Cookie: jar.header() } });
        jar.keep(response);
        return response.text();
    }

    it('redirects / to the wiki', async () => {
        const response = await fetch(`${wiki.url}/`, { redirect: 'manual' });
        expect(response.status).to.equal(302);
        expect(response.headers.get('location') ?? '').to.endWith('/dokuwiki/');
    });

    it('shows a login form with a sectok hidden field', async () => {
        const html = await (await fetch(loginUrl())).text();
        // DokuWiki fills the token in for signed-in sessions only, so the anonymous login form's is empty.
        expect(html).to.contain('<input type="hidden" name="sectok" value="" />');
        expect(html).to.contain('<form id="dw__login"');
        expect(html).to.contain('name="u"');
        expect(html).to.contain('name="p"');
    });

    it('signs the admin in with the username, the password, the sectok and the cookies', async () => {
        const { status, page } = await signIn(DOKUWIKI_ADMIN.password);
        expect(status).to.equal(302);
        expect(page).to.contain(`Logged in as: <bdi>${DOKUWIKI_ADMIN.name}</bdi> (<bdi>${DOKUWIKI_ADMIN.username}</bdi>)`);
        expect(page).to.contain('do=logout');
        expect(page).to.contain('do=admin');
        expect(page).to.match(/<input type="hidden" name="sectok" value="[0-9a-f]{32}"/);
    });

    it('refuses a wrong password', async () => {
        const { page } = await signIn('not-the-password');
        expect(page).to.not.contain('do=logout');
        expect(page).to.contain('<form id="dw__login"');
    });

    it('signs out only with the sectok of the session', async () => {
        const { page, jar } = await signIn(DOKUWIKI_ADMIN.password);
        const sectok = /do=logout&amp;sectok=([0-9a-f]+)/.exec(page)?.[1];
        expect(sectok).to.exist();
        await openPage(`${pageUrl()}&do=logout&sectok=0123456789abcdef0123456789abcdef`, jar);
        expect(await openPage(pageUrl(), jar)).to.contain('do=logout');
        await openPage(`${pageUrl()}&do=logout&sectok=${sectok ?? ''}`, jar);
        expect(await openPage(pageUrl(), jar)).to.not.contain('do=logout');
    });
});
