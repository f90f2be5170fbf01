// needs: docker
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';
import Https from 'node:https';
import { Resolver } from 'node:dns/promises';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { waitUntil } from '../helpers/wait.ts';
import { startBind } from '../support/bind.ts';
import { parseExports, runServicesScript, servicesEnvironment } from '../support/services.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function fetchWithCa(url: string, ca: string): Promise<number> {
    return new Promise((resolve, reject) => {
        Https.get(url, { ca }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
        }).on('error', reject);
    });
}

describe('scripts/services.sh', () => {
    it(
        'starts the Docker engine, an nginx of its own, pebble and a registry on loopback, and stops them again',
        { timeout: 300_000 },
        async () => {
            const environment = await servicesEnvironment();
            const state = environment.GATEHOUSE_SERVICES_DIR;
            try {
                const up = runServicesScript('up', environment);
                expect(up.status, up.stderr).to.equal(0);
                const exported = parseExports(up.stdout);
                expect(Object.keys(exported).sort()).to.equal([
                    'ACME_CA_FILE',
                    'ACME_DIRECTORY_URL',
                    'ACME_WEBROOT',
                    'DOCKER_HOST',
                    'NGINX_BIN',
                    'NGINX_CONF',
                    'NGINX_HTTPS_PORT',
                    'NGINX_HTTP_PORT',
                    'NGINX_LISTEN_ADDRESS',
                    'NGINX_SITES_DIR',
                    'REGISTRY_URL',
                ]);
                expect(
                    up.stdout
                        .trim()
                        .split('\n')
                        .every((line) => line.startsWith('export ')),
                ).to.be.true();

                const docker = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
                    env: { ...process.env, DOCKER_HOST: exported.DOCKER_HOST },
                    encoding: 'utf8',
                });
                expect(docker.status, docker.stderr).to.equal(0);
                expect((await fetch(`http://127.0.0.1:${exported.NGINX_HTTP_PORT}/`)).status).to.equal(404);
                expect(Fs.existsSync(exported.NGINX_SITES_DIR ?? '')).to.be.true();
                expect(await fetchWithCa(exported.ACME_DIRECTORY_URL ?? '', Fs.readFileSync(exported.ACME_CA_FILE ?? '', 'utf8'))).to.equal(
                    200,
                );
                expect((await fetch(`http://${exported.REGISTRY_URL}/v2/`)).status).to.equal(200);

                // A site naming a certificate that is gone must not keep nginx from stopping.
                Fs.writeFileSync(
                    Path.join(exported.NGINX_SITES_DIR ?? '', 'gone.conf'),
                    `server { listen 127.0.0.1:${exported.NGINX_HTTPS_PORT} ssl; ssl_certificate /nonexistent/cert.pem; ssl_certificate_key /nonexistent/key.pem; }\n`,
                );
                const down = runServicesScript('down', environment);
                expect(down.status, down.stderr).to.equal(0);
                const nginxAnswers = () =>
                    fetch(`http://127.0.0.1:${exported.NGINX_HTTP_PORT}/`).then(
                        () => true,
                        () => false,
                    );
                await waitUntil('nginx stops answering', async () => !(await nginxAnswers()), { timeoutMs: 5_000, intervalMs: 100 });
                await expect(fetch(`http://127.0.0.1:${exported.NGINX_HTTP_PORT}/`)).to.reject();
                await expect(fetch(`http://${exported.REGISTRY_URL}/v2/`)).to.reject();
            } finally {
                runServicesScript('down', environment);
                Fs.rmSync(state, { recursive: true, force: true });
            }
        },
    );

    it("leaves a named it did not start running (Debian's init script would SIGKILL any named)", { timeout: 300_000 }, async () => {
        const bind = await startBind();
        expect(bind, 'BIND is installed by services.sh prepare').to.exist();
        const environment = await servicesEnvironment();
        try {
            const up = runServicesScript('up', environment);
            expect(up.status, up.stderr).to.equal(0);
            const resolver = new Resolver({ timeout: 2_000, tries: 1 });
            resolver.setServers([bind?.server ?? '']);
            const soa = await resolver.resolveSoa(bind?.zone ?? '');
            expect(soa.nsname).to.exist();
        } finally {
            runServicesScript('down', environment);
            Fs.rmSync(environment.GATEHOUSE_SERVICES_DIR, { recursive: true, force: true });
            await bind?.stop();
        }
    });
});
