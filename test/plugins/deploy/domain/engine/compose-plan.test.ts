import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { containerFilesOf, containerPathOf } from '../../../../../plugins/deploy/domain/engine/compose-objects.ts';
import { planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function planOf(lines: string[], values: Record<string, string> = {}) {
    return planProject(parseCompose([...lines, ''].join('\n')), {
        project: 'shop',
        workingDir: '/srv/shop',
        composeFile: '/srv/shop/compose.yaml',
        values,
        objectKey: Crypto.randomBytes(32),
    });
}

describe('deploy engine, compose mode: where a service finds its secrets and configs', () => {
    it('puts a secret under /run/secrets and a config under /, unless the target is a path, with root, 0444 by default', () => {
        const plan = planOf(
            [
                'services:',
                '  web:',
                '    image: web',
                '    secrets: [token, {source: token, target: other.txt, uid: 33, gid: "44", mode: "0440"}, {source: token, target: /etc/token}]',
                '    configs: [conf, {source: conf, target: app/conf.ini}]',
                'secrets: {token: {environment: TOKEN}}',
                'configs: {conf: {environment: CONF}}',
            ],
            { TOKEN: 'value-of-token', CONF: 'value-of-conf' },
        );
        const files = plan.services[0]?.objectFiles ?? [];
        expect(files.map(containerPathOf)).to.equal([
            '/run/secrets/token',
            '/run/secrets/other.txt',
            '/etc/token',
            '/conf',
            '/app/conf.ini',
        ]);
        expect(files.map(({ uid, gid, mode }) => [uid, gid, mode.toString(8)])).to.equal([
            ['0', '0', '444'],
            ['33', '44', '440'],
            ['0', '0', '444'],
            ['0', '0', '444'],
            ['0', '0', '444'],
        ]);
        const read = containerFilesOf(plan).get('web');
        expect(read?.files.map((file) => file.content.toString())).to.equal([
            'value-of-token',
            'value-of-token',
            'value-of-token',
            'value-of-conf',
            'value-of-conf',
        ]);
        expect(read?.fingerprints.join(' ')).to.not.contain('value-of');
    });

    it('reads a config written inline (content:), its variables filled from the secrets', () => {
        const plan = planOf(
            ['services:', '  web:', '    image: web', '    configs: [motd]', 'configs:', '  motd:', '    content: "hello ${WHO}"'],
            { WHO: 'world' },
        );
        expect(
            containerFilesOf(plan)
                .get('web')
                ?.files.map((file) => [file.path, file.content.toString()]),
        ).to.equal([['/motd', 'hello world']]);
    });

    it('refuses an owner that is not a number, an undeclared source and a missing value, naming the entry', () => {
        const service = ['services:', '  web:', '    image: web'];
        expect(() =>
            planOf([...service, '    secrets: [{source: token, uid: www-data}]', 'secrets: {token: {environment: TOKEN}}']),
        ).to.throw('services.web.secrets: uid www-data is not a numeric user id');
        expect(() => planOf([...service, '    configs: [nothing]'])).to.throw(
            'services.web.configs: no config nothing is declared under configs',
        );
        const missing = planOf([...service, '    secrets: [token]', 'secrets: {token: {environment: TOKEN}}']);
        expect(() => containerFilesOf(missing)).to.throw("secrets.token.environment: TOKEN is not in the app's secrets file");
    });
});
