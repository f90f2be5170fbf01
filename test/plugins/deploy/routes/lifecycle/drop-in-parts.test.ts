// needs: docker
/**
 * An auto-login adapter and a DNS provider are each one file: written here into folders of their own (named by
 * AUTOLOGIN_ADAPTERS_DIRS and DNS_PROVIDERS_DIRS), they are used through the API by deploys of real apps, with no
 * other change to the project. Copy this file to test a new adapter or provider end to end.
 */
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../../../../../server.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine.
const suffix = Crypto.randomBytes(3).toString('hex');
const RECORDED = `recorded-${suffix}`;
const SIGNED = `signed-${suffix}`;
const ADAPTER = `dropped-${suffix}`;
const PROVIDER = `dropped-${suffix}`;
const MARK = `drop-in app ${suffix}`;
const SHARED = { user: 'keeper', password: `shared-${suffix}` };

/** A provider that keeps the records in a JSON file and writes each call it gets to a log, one line each. */
function providerFile(records: string, calls: string): string {
    return `import Fs from 'node:fs';

import type { DnsConfig } from '${ROOT_DIR}/lib/config.ts';
import type { DnsProvider } from '${ROOT_DIR}/plugins/deploy/domain/dns/dns-providers.ts';

const RECORDS = ${JSON.stringify(records)};
const read = (): Record<string, string[]> => (Fs.existsSync(RECORDS) ? JSON.parse(Fs.readFileSync(RECORDS, 'utf8')) : {});
const write = (records: Record<string, string[]>) => Fs.writeFileSync(RECORDS, JSON.stringify(records));
const call = (line: string) => Fs.appendFileSync(${JSON.stringify(calls)}, line + '\\n');

export default function createProvider(config: DnsConfig): DnsProvider {
    return {
        name: '${PROVIDER}',
        async setAddress(fqdn, address, ttl) {
            const addresses = typeof address === 'string' ? [address] : [...address];
            write({ ...read(), [fqdn]: addresses });
            call(\`set \${fqdn} \${addresses.join(',')} \${ttl} in \${config.zone ?? 'no zone'}\`);
        },
        async removeAddress(fqdn) {
            const { [fqdn]: _removed, ...rest } = read();
            write(rest);
            call(\`remove \${fqdn}\`);
        },
        async lookupAddress(fqdn) {
            return read()[fqdn] ?? [];
        },
    };
}
`;
}

/** An adapter that reads the app's page, checks the shared account, and gives the visitor a session cookie. */
function adapterFile(calls: string): string {
    return `import Fs from 'node:fs';

import type { AutoLoginAdapter } from '${ROOT_DIR}/plugins/sso/autologin/adapter-types.ts';

const adapter: AutoLoginAdapter = {
    title: 'Dropped-in auto-login',
    async signIn(request) {
        const page = await (await fetch(new URL('/', request.upstream), { signal: AbortSignal.timeout(request.timeoutMs) })).text();
        Fs.appendFileSync(${JSON.stringify(calls)}, \`\${request.upstream} \${request.username}\\n\`);
        if (!page.includes(${JSON.stringify(MARK)})) {
            return { ok: false, reason: 'the upstream is not the app' };
        }

        if (request.password !== ${JSON.stringify(SHARED.password)}) {
            return { ok: false, reason: 'the app refused the password' };
        }

        const cookie = { name: 'dropped_session', value: request.username, path: '/', httpOnly: true, secure: true };
        return { ok: true, cookies: [cookie], storage: {}, landing: '/' };
    },
};

export default adapter;
`;
}

describe('deploy manager: an auto-login adapter and a DNS provider dropped into folders of their own', { timeout: 600_000 }, () => {
    let scene: SignInScene;
    let image: string;
    let adapters: string;
    let providers: string;
    const records = () => JSON.parse(Fs.readFileSync(Path.join(providers, 'records.json'), 'utf8')) as Record<string, string[]>;
    const callsOf = (folder: string) =>
        Fs.existsSync(Path.join(folder, 'calls.log')) ? Fs.readFileSync(Path.join(folder, 'calls.log'), 'utf8').trim().split('\n') : [];

    /** Creates and deploys an app of the test image, for any user of the provider or for a new group's; answers its host port. */
    const deployApp = async (name: string, access: 'signed-in' | { group: string }) => {
        const created = await scene.admin.post('/api/apps', { name, image: image.replace(/:1$/, ''), tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = ['services:', '  web:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        const saved = await scene.admin.put(`/api/apps/${name}/draft`, {
            compose,
            ...(access === 'signed-in' ? { auth: { access } } : {}),
        });
        expect(saved.status, saved.text).to.equal(200);
        if (access !== 'signed-in') {
            scene.authentik.addGroup(access.group);
            const groups = (await scene.admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> };
            const chosen = groups.groups.filter((group) => group.name === access.group).map(({ pk, name }) => ({ pk, name }));
            expect((await scene.admin.put(`/api/apps/${name}/access`, { groups: chosen })).status).to.equal(200);
        }

        const deployed = await runToEnd(scene.admin, await scene.admin.post(`/api/apps/${name}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        return { port, deployed };
    };

    before({ timeout: 600_000 }, async () => {
        adapters = temporaryDirectory('gatehouse-adapters-');
        providers = temporaryDirectory('gatehouse-dns-providers-');
        Fs.writeFileSync(Path.join(adapters, `${ADAPTER}.ts`), adapterFile(Path.join(adapters, 'calls.log')));
        Fs.writeFileSync(
            Path.join(providers, `${PROVIDER}.ts`),
            providerFile(Path.join(providers, 'records.json'), Path.join(providers, 'calls.log')),
        );
        scene = await signInScene(BASE_DOMAIN, {
            AUTOLOGIN_ADAPTERS_DIRS: adapters,
            DNS_PROVIDER: PROVIDER,
            DNS_PROVIDERS_DIRS: providers,
            DNS_ZONE: BASE_DOMAIN,
            DNS_ADDRESS: '127.0.0.1',
        });
        image = buildWebImage(`${scene.services.exports.REGISTRY_URL}/gatehouse-test/drop-in-${suffix}:1`, `<h1>${MARK}</h1>\n`, true);
    });

    after(async () => {
        await scene?.close([RECORDED, SIGNED]);
        if (image) await removeProjects([], [image]);
        for (const folder of [adapters, providers]) {
            if (folder) Fs.rmSync(folder, { recursive: true, force: true });
        }
    });

    it("a DNS provider named by DNS_PROVIDER: a deploy sets the app's record, a delete removes it", async () => {
        const domain = `${RECORDED}.${BASE_DOMAIN}`;
        const { deployed } = await deployApp(RECORDED, 'signed-in');
        expect(deployed.lines.map((line) => line.text)).to.include(`DNS: ${domain} now points at 127.0.0.1 (${PROVIDER})`);
        expect(records()[domain]).to.equal(['127.0.0.1']);
        expect(callsOf(providers)).to.include(`set ${domain} 127.0.0.1 300 in ${BASE_DOMAIN}`);

        const deleted = await runToEnd(
            scene.admin,
            await scene.admin.delete(`/api/apps/${RECORDED}`, { confirm: RECORDED, removeDns: true }),
        );
        expect(deleted.state, deleted.text).to.equal('succeeded');
        expect(deleted.lines.map((line) => line.text)).to.include(`DNS: removed the address records of ${domain}`);
        expect(records()[domain]).to.be.undefined();
        expect(callsOf(providers)).to.include(`remove ${domain}`);
    });

    it('an auto-login adapter: chosen by its name through the API, checked by the run, and handing the visitor the session', async () => {
        const group = `${SIGNED}-users`;
        const { port } = await deployApp(SIGNED, { group });
        scene.authentik.addUser({ username: 'visitor', password: 'visitor-password', email: 'visitor@example.com', groups: [group] });

        // The specs take the adapters there are: the dropped one, and no name that is not one.
        const unknown = await scene.admin.put(`/api/apps/${SIGNED}/draft`, { login: { adapter: `missing-${suffix}` } });
        expect(unknown.status).to.equal(422);
        expect(unknown.text).to.contain(ADAPTER);

        const changed = await runToEnd(
            scene.admin,
            await scene.admin.post(`/api/apps/${SIGNED}/sso`, {
                account: 'autologin',
                sharedUser: SHARED.user,
                sharedPassword: SHARED.password,
                login: { adapter: ADAPTER },
            }),
        );
        expect(changed.state, changed.text).to.equal('succeeded');
        expect(changed.text).to.contain(`the auto-login signs in to the app as ${SHARED.user}`);
        // The run's check ran the adapter's code against the app's own upstream.
        expect(callsOf(adapters).filter((line) => line.includes(`:${port}`) && line.endsWith(` ${SHARED.user}`))).to.not.be.empty();
        const shown = (await scene.admin.get(`/api/apps/${SIGNED}`)).body as { app: { identity: { values: Record<string, string> } } };
        expect(shown.app.identity.values).to.include({ adapter: ADAPTER });

        // Through nginx: the provider's sign-in, then the adapter's session for the visitor.
        const visitor = new Visitor(BASE_DOMAIN);
        const url = `https://${SIGNED}.${BASE_DOMAIN}:${scene.httpsPort}/__svc/autologin`;
        const hops = await signInThroughProvider(visitor, url, 'visitor', 'visitor-password');
        expect(lastHop(hops).body, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.contain(MARK);
        expect(visitor.cookiesOf(`${SIGNED}.${BASE_DOMAIN}:${scene.httpsPort}`).get('dropped_session')).to.equal(SHARED.user);
    });
});
