// needs: nginx
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { loadConfig } from '../../../../../lib/config.ts';
import { reloadNginx } from '../../../../../plugins/deploy/domain/host/nginx-control.ts';
import { freePorts, temporaryDirectory } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { ensureNginx, ownNginxConfiguration } from '../../../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** An nginx of the test's own on loopback, whose one site answers the text of `version`. */
function configuration(dir: string, port: number, version: string): string {
    return ownNginxConfiguration(dir, [`server { listen 127.0.0.1:${port}; location / { return 200 '${version}'; } }`], 2);
}

async function answer(port: number): Promise<string> {
    // A new connection each time, as a visitor's first request comes.
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
    return await response.text();
}

describe('deploy manager: reloading the managed nginx', () => {
    let dir: string;
    let conf: string;
    let port: number;
    let binary: string;

    before(async () => {
        const found = ensureNginx();
        if (!found) {
            throw new Error('nginx is not installed');
        }

        binary = found;
        dir = temporaryDirectory('nginx-reload-');
        conf = Path.join(dir, 'nginx.conf');
        [port] = (await freePorts(1)) as [number];
        Fs.writeFileSync(conf, configuration(dir, port, 'v0'));
        const started = spawnSync(binary, ['-e', 'stderr', '-p', dir, '-c', conf], { encoding: 'utf8' });
        expect(started.status, started.stderr).to.equal(0);
        await waitUntil('the test nginx answers', async () => (await answer(port).catch(() => '')) === 'v0');
    });

    after(() => {
        const pid = Number(Fs.readFileSync(Path.join(dir, 'nginx.pid'), 'utf8').trim());
        process.kill(pid, 'SIGTERM');
        Fs.rmSync(dir, { recursive: true, force: true });
    });

    const host = (environment: NodeJS.ProcessEnv) => loadConfig({ NGINX_BIN: binary, ...environment }).host;

    it('returns once the new configuration answers, with no wait of its own after', async () => {
        for (let round = 1; round <= 20; round += 1) {
            Fs.writeFileSync(conf, configuration(dir, port, `v${round}`));
            const reloaded = await reloadNginx(host({ NGINX_CONF: conf }));
            expect(reloaded.ok, reloaded.output).to.be.true();
            expect(await answer(port), `round ${round}`).to.equal(`v${round}`);
        }
    });

    it('reloads where it cannot watch the running nginx (its pid file named in an included file)', async () => {
        Fs.writeFileSync(Path.join(dir, 'pid.conf'), `pid ${dir}/nginx.pid;\n`);
        Fs.writeFileSync(conf, configuration(dir, port, 'included').replace(/^pid .*$/m, `include ${dir}/pid.conf;`));
        const reloaded = await reloadNginx(host({ NGINX_CONF: conf }));
        expect(reloaded.ok, reloaded.output).to.be.true();
        await waitUntil('the reloaded nginx answers', async () => (await answer(port)) === 'included');
    });

    it('says why when nginx refuses the reload', async () => {
        const unnamed = Path.join(dir, 'unnamed.conf');
        Fs.writeFileSync(unnamed, configuration(dir, port, 'unseen').replace(/^pid .*$/m, `pid ${dir}/missing.pid;`));
        const reloaded = await reloadNginx(host({ NGINX_CONF: unnamed }));
        expect(reloaded.ok).to.be.false();
        expect(reloaded.output).to.contain('missing.pid');
    });
});
