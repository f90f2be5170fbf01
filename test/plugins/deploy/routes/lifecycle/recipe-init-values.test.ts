// needs: docker
import { execFileSync, spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import YAML from 'yaml';

import { temporaryDirectory } from '../../../../helpers/server.ts';
import { APACHE_SSO, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'init-values.test';
const SUFFIX = Crypto.randomBytes(3).toString('hex');
/** One app for the command, one with the value in its compose file too. */
const APP = `initval-${SUFFIX}`;
const OTHER = `initval-compose-${SUFFIX}`;
const ADMIN = 'boss';
/**
 * The admin's e-mail as the identity provider has it: whatever a provider lets its users write. It reaches the
 * recipe's command and the compose file through {{ADMIN_EMAIL}}, and would run a command and add a volume if it
 * were spliced into their text.
 */
const HOSTILE_EMAIL = `x"; touch /tmp/injected; echo 'y\n    volumes:\n      - /:/host:ro\n#@example.com`;

/** The recipe puts the placeholder in each kind of shell quoting. */
const RECIPE = [
    'image: gatehouse-test/apache-sso',
    'title: Apache portal (init values test)',
    'method: none',
    'level: documented',
    'init:',
    `  - printf '%s\\n' "double={{ADMIN_EMAIL}}" plain={{ADMIN_EMAIL}} 'single={{ADMIN_EMAIL}}' > /tmp/init.txt`,
    'initUser: www-data',
    'adminUser: required',
    'sources: ["https://httpd.apache.org/docs/2.4/mod/mod_authz_core.html#require"]',
    '',
].join('\n');

describe('deploy manager: the values a recipe fills in reach its commands and the compose file as values', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let recipeDir: string;
    let image: string;
    let group = '';

    /** An app of the image with the admin named; `extra` are lines put before the compose file's services. */
    const prepareApp = async (name: string, extra: string[]) => {
        const port = await scene.createApp(name, image);
        const compose = [
            ...extra,
            'services:',
            '  web:',
            `    image: ${image}`,
            '    restart: unless-stopped',
            ...(extra.length > 0 ? ['    environment:', '      PORTAL_ADMIN: "{{ADMIN_EMAIL}}"'] : []),
            '    ports:',
            `      - "127.0.0.1:${port}:80"`,
            '',
        ].join('\n');
        const draft = await scene.admin.put(`/api/apps/${name}/draft`, { compose, adminUser: ADMIN });
        expect(draft.status, draft.text).to.equal(200);
        const access = await scene.admin.put(`/api/apps/${name}/access`, { groups: [{ pk: group, name: 'initval-users' }] });
        expect(access.status, access.text).to.equal(200);
    };

    const inContainer = (app: string, ...command: string[]) =>
        spawnSync('docker', ['exec', `${app}-web-1`, ...command], { encoding: 'utf8' });

    before({ timeout: 900_000 }, async () => {
        image = debianImage(APACHE_SSO);
        recipeDir = temporaryDirectory('gatehouse-recipes-');
        Fs.writeFileSync(Path.join(recipeDir, 'apache-init-values.yaml'), RECIPE);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipeDir });
        group = scene.authentik.addGroup('initval-users');
        scene.authentik.addUser({
            username: ADMIN,
            password: 'boss-password',
            email: HOSTILE_EMAIL,
            name: 'The Boss',
            groups: ['initval-users'],
        });

        await prepareApp(APP, []);
        await prepareApp(OTHER, ['# the admin: {{ADMIN_EMAIL}}']);
    });

    after(async () => {
        await scene?.close([APP, OTHER]);
        if (recipeDir) {
            Fs.rmSync(recipeDir, { recursive: true, force: true });
        }
    });

    it('runs the init command with the value as one word wherever it stands, and runs nothing the value holds', async () => {
        const deployed = await runToEnd(scene.admin, await scene.admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.text).to.contain("Ran the recipe's init command 1 of 1 in web");

        expect(inContainer(APP, 'test', '-e', '/tmp/injected').status).to.equal(1);
        const written = execFileSync('docker', ['exec', `${APP}-web-1`, 'cat', '/tmp/init.txt'], { encoding: 'utf8' });
        expect(written).to.equal(`double=${HOSTILE_EMAIL}\nplain=${HOSTILE_EMAIL}\nsingle=${HOSTILE_EMAIL}\n`);
    });

    it('writes the value into the compose file as one scalar, and leaves the comment as it was', async () => {
        const deployed = await runToEnd(scene.admin, await scene.admin.post(`/api/apps/${OTHER}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        const text = Fs.readFileSync(Path.join(scene.server.context.config.apps.appsDir, OTHER, 'compose.yaml'), 'utf8');
        expect(text.split('\n')[0]).to.equal('# the admin: {{ADMIN_EMAIL}}');
        const written = YAML.parse(text) as { services: { web: { environment: Record<string, string>; volumes?: string[] } } };
        expect(written.services.web.environment.PORTAL_ADMIN).to.equal(HOSTILE_EMAIL);
        expect(written.services.web.volumes).to.not.exist();
        expect(inContainer(OTHER, 'test', '-e', '/host/etc').status).to.equal(1);
    });
});
