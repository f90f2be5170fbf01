// needs: docker
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import { loadConfig } from '../../../../../lib/config.ts';
import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { execInContainer } from '../../../../../plugins/deploy/domain/engine/app-engine.ts';
import { ComposeEngine } from '../../../../../plugins/deploy/domain/engine/compose-engine.ts';
import { planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';
import type { ProjectPlan } from '../../../../../plugins/deploy/domain/engine/plan-model.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const IMAGE = 'gatehouse-test/compose-vault:1';
const OPTIONS = { healthTimeoutMs: 60_000, settleMs: 500 };
const OBJECT_KEY = Crypto.randomBytes(32);

/** A file secret, a secrets-file secret (another name, owner and mode) and a config at a path of its own. */
const VAULT_COMPOSE = [
    'services:',
    '  web:',
    `    image: ${IMAGE}`,
    '    secrets: [file_secret, {source: env_secret, target: env.secret, uid: "33", gid: "44", mode: 0400}]',
    '    configs: [{source: app_conf, target: /etc/app/app.conf}, plain_conf]',
    'secrets:',
    '  file_secret: {file: ./file-secret.txt}',
    '  env_secret: {environment: API_TOKEN}',
    'configs:',
    '  app_conf: {file: ./app.conf}',
    '  plain_conf: {environment: PLAIN}',
    '',
].join('\n');

/** `<file secret>|<mode, owner>|<env secret>|<mode, owner>|<config>|<config at its default place>` */
const READ_VAULT = [
    '$(cat /run/secrets/file_secret)',
    '$(stat -c "%a %u:%g" /run/secrets/file_secret)',
    '$(cat /run/secrets/env.secret)',
    '$(stat -c "%a %u:%g" /run/secrets/env.secret)',
    '$(cat /etc/app/app.conf)',
    '$(cat /plain_conf)',
].join('|');

describe('deploy engine, compose mode: secrets and configs', () => {
    const docker = new Docker();
    const project = `composevault${Crypto.randomBytes(3).toString('hex')}`;
    const lines: string[] = [];
    const engine = new ComposeEngine(docker, loadConfig({ DATA_DIR: temporaryDirectory() }).host, (line) => lines.push(line));
    let appDir: string;

    before(() => {
        buildWebImage(IMAGE, 'vault');
        appDir = temporaryDirectory('gatehouse-compose-vault-');
        Fs.writeFileSync(Path.join(appDir, 'file-secret.txt'), 'from-a-file');
        Fs.writeFileSync(Path.join(appDir, 'app.conf'), 'listen 80');
    });

    after(async () => {
        await removeProjects([project]);
        Fs.rmSync(appDir, { recursive: true, force: true });
    });

    function planOf(values: Record<string, string>, compose = VAULT_COMPOSE, name = project): ProjectPlan {
        return planProject(parseCompose(compose), {
            project: name,
            workingDir: appDir,
            composeFile: Path.join(appDir, 'compose.yaml'),
            values,
            objectKey: OBJECT_KEY,
        });
    }

    async function upAndCommit(values: Record<string, string>): Promise<{ created: number; kept: string[] }> {
        const outcome = await engine.up(planOf(values), new Map(), OPTIONS);
        await engine.commit(outcome);
        return { created: outcome.created.length, kept: outcome.kept };
    }

    async function readVault(): Promise<string> {
        const result = await execInContainer(docker.getContainer(`${project}-web-1`), `echo "${READ_VAULT}"`, { timeoutMs: 10_000 });
        expect(result.exitCode, result.output).to.equal(0);
        return result.output.trim();
    }

    it('puts them in the container with their owner and mode, keeps it while they are unchanged and recreates it when one changes', async () => {
        expect(await upAndCommit({ API_TOKEN: 'token-one', PLAIN: 'plain-one' })).to.equal({ created: 1, kept: [] });
        expect(await readVault()).to.equal('from-a-file|444 0:0|token-one|400 33:44|listen 80|plain-one');

        expect(await upAndCommit({ API_TOKEN: 'token-one', PLAIN: 'plain-one' })).to.equal({ created: 0, kept: ['web'] });

        expect(await upAndCommit({ API_TOKEN: 'token-two', PLAIN: 'plain-one' })).to.equal({ created: 1, kept: [] });
        expect(await readVault()).to.equal('from-a-file|444 0:0|token-two|400 33:44|listen 80|plain-one');

        Fs.writeFileSync(Path.join(appDir, 'file-secret.txt'), 'from-a-changed-file');
        expect(await upAndCommit({ API_TOKEN: 'token-two', PLAIN: 'plain-one' })).to.equal({ created: 1, kept: [] });
        expect(await readVault()).to.equal('from-a-changed-file|444 0:0|token-two|400 33:44|listen 80|plain-one');

        // The values never reach the container's configuration, its labels or the engine's log.
        const inspected = JSON.stringify(await docker.getContainer(`${project}-web-1`).inspect());
        for (const value of ['token-two', 'from-a-changed-file', 'plain-one']) {
            expect(inspected).to.not.contain(value);
            expect(lines.join('\n')).to.not.contain(value);
        }
    });

    it('refuses an external secret, which only a Swarm has, before it makes anything', async () => {
        const other = `${project}x`;
        const compose = [
            'services:',
            '  web:',
            `    image: ${IMAGE}`,
            '    secrets: [shared]',
            'secrets:',
            '  shared: {external: true}',
            '',
        ];
        await expect(engine.up(planOf({}, compose.join('\n'), other), new Map(), OPTIONS)).to.reject(
            /secrets\.shared: an external secret is a Swarm's \(DEPLOY_ENGINE=swarm\); give file: or environment:/,
        );
        expect(await docker.listNetworks({ filters: { name: [`${other}_default`] } })).to.equal([]);
    });
});
