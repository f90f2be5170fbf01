import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { NginxIntegration } from '../../../../../plugins/deploy/domain/overview/integrations.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { freePort, temporaryDirectory } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { ensureNginx } from '../../../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, after } = lab;
const { expect } = Code;

/** A configuration of nginx's own in a folder of its own, including `sitesDir` or not, with its pid file there. */
async function writeConfiguration(includeSites: boolean): Promise<{ folder: string; conf: string; sitesDir: string; pidFile: string }> {
    const folder = temporaryDirectory('gatehouse-nginx-health-');
    const sitesDir = Path.join(folder, 'sites');
    Fs.mkdirSync(sitesDir);
    Fs.mkdirSync(Path.join(folder, 'logs'));
    const pidFile = Path.join(folder, 'nginx.pid');
    const conf = Path.join(folder, 'nginx.conf');
    Fs.writeFileSync(
        conf,
        [
            'worker_processes 1;',
            `pid ${pidFile};`,
            `error_log ${folder}/logs/error.log;`,
            'events { worker_connections 16; }',
            'http {',
            `    access_log ${folder}/logs/access.log;`,
            `    client_body_temp_path ${folder}/body;`,
            `    proxy_temp_path ${folder}/proxy;`,
            `    fastcgi_temp_path ${folder}/fastcgi;`,
            `    uwsgi_temp_path ${folder}/uwsgi;`,
            `    scgi_temp_path ${folder}/scgi;`,
            `    server { listen 127.0.0.1:${await freePort()}; location / { return 404; } }`,
            includeSites ? `    include ${sitesDir}/*.conf;` : '',
            '}',
            '',
        ].join('\n'),
    );
    return { folder, conf, sitesDir, pidFile };
}

async function nginxOf(server: DeployTestServer): Promise<NginxIntegration> {
    const response = await server.admin.get('/api/system');
    expect(response.status).to.equal(200);
    return (response.body as { integrations: { nginx: NginxIntegration } }).integrations.nginx;
}

describe('deploy manager: whether the managed nginx serves the apps', { timeout: 60_000 }, () => {
    const cleanups: (() => Promise<void> | void)[] = [];

    after(async () => {
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    });

    it('says a configuration that passes its test but includes no sites folder does not include the sites', async () => {
        const binary = ensureNginx();
        expect(binary, 'nginx is installed').to.exist();
        const { folder, conf, sitesDir } = await writeConfiguration(false);
        cleanups.push(() => Fs.rmSync(folder, { recursive: true, force: true }));
        const server = await deployTestServer({ NGINX_BIN: binary ?? '', NGINX_CONF: conf, NGINX_SITES_DIR: sitesDir });
        cleanups.push(() => server.context.cleanup());

        const nginx = await nginxOf(server);
        expect(nginx.configTest.ok, nginx.configTest.output).to.be.true();
        expect(nginx).to.include({ sitesDir, includesSites: false, running: false });
    });

    it('tells a running nginx that includes the sites from one that is stopped', async () => {
        const binary = ensureNginx() ?? '';
        const { folder, conf, sitesDir, pidFile } = await writeConfiguration(true);
        cleanups.push(() => Fs.rmSync(folder, { recursive: true, force: true }));
        const server = await deployTestServer({ NGINX_BIN: binary, NGINX_CONF: conf, NGINX_SITES_DIR: sitesDir });
        cleanups.push(() => server.context.cleanup());
        expect(await nginxOf(server)).to.include({ includesSites: true, running: false });

        const started = spawnSync(binary, ['-e', 'stderr', '-c', conf], { encoding: 'utf8', timeout: 30_000 });
        expect(started.status, started.stderr).to.equal(0);
        cleanups.push(() => {
            const pid = Number(Fs.readFileSync(pidFile, 'utf8').trim());
            process.kill(pid, 'SIGQUIT');
        });
        await waitUntil('nginx wrote its pid file', () => Fs.existsSync(pidFile));
        // Whether it runs is asked each time, not kept with the minute's configuration test.
        expect(await nginxOf(server)).to.include({ includesSites: true, running: true });
    });
});
