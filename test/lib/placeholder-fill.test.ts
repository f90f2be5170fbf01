import { spawnSync } from 'node:child_process';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import YAML from 'yaml';

import { fillCommandPlaceholders, fillYamlPlaceholders } from '../../lib/placeholder-fill.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** Text that means something to YAML and to a shell: line breaks, quotes, a comment, a command. */
const HOSTILE = `x"\n    volumes:\n      - /:/gh:ro\u2028'; echo injected; $(echo injected) #\\`;

describe('placeholder filling: YAML values', () => {
    const compose = [
        '# the admin is {{ADMIN_USER}}',
        'services:',
        '  app:',
        '    image: {{IMAGE}}',
        '    environment:',
        '      QUOTED: &admin "{{ADMIN_USER}}"',
        '      AGAIN: *admin',
        '      INSIDE: user={{ADMIN_USER}};',
        '      BLOCK: |',
        '        {{ADMIN_USER}}',
        '      "{{ADMIN_USER}}": key',
        '      LATER: "{{GATEWAY}}"',
        '    ports:',
        '      - "127.0.0.1:{{PORT}}:80"',
        '',
    ].join('\n');

    it('fills each value as one scalar, and leaves comments, keys and unknown placeholders as written', () => {
        const filled = fillYamlPlaceholders(compose, { ADMIN_USER: HOSTILE, IMAGE: 'nginx:1.27', PORT: '8080' });
        expect(filled.unfilled).to.equal(['GATEWAY']);
        expect(filled.text.split('\n')[0]).to.equal('# the admin is {{ADMIN_USER}}');
        const parsed = YAML.parse(filled.text) as { services: { app: Record<string, unknown> } };
        expect(Object.keys(parsed.services.app)).to.equal(['image', 'environment', 'ports']);
        expect(parsed.services.app.image).to.equal('nginx:1.27');
        expect(parsed.services.app.ports).to.equal(['127.0.0.1:8080:80']);
        expect(parsed.services.app.environment).to.equal({
            QUOTED: HOSTILE,
            AGAIN: HOSTILE,
            INSIDE: `user=${HOSTILE};`,
            BLOCK: `${HOSTILE}\n`,
            '{{ADMIN_USER}}': 'key',
            LATER: '{{GATEWAY}}',
        });
    });

    it('leaves a text without placeholders in its values exactly as it is', () => {
        const text = 'a: 0440 # mode\nb: [1, 2]\n';
        expect(fillYamlPlaceholders(text, { X: 'y' })).to.equal({ text, unfilled: [] });
    });
});

describe('placeholder filling: shell commands', () => {
    it('keeps values out of the command, and the shell reads each as one word in any quoting', () => {
        const command = `printf '%s\\n' "double={{ADMIN_USER}}" plain={{ADMIN_USER}} 'single={{ADMIN_USER}}' \\{{NONE}}`;
        const filled = fillCommandPlaceholders(command, { ADMIN_USER: HOSTILE });
        expect(filled.command).to.not.contain('volumes');
        expect(filled.environment).to.equal({ GATEHOUSE_ADMIN_USER: HOSTILE });
        const ran = spawnSync('sh', ['-c', filled.command], { encoding: 'utf8', env: { PATH: process.env.PATH, ...filled.environment } });
        expect(ran.status).to.equal(0);
        expect(ran.stdout).to.equal(`double=${HOSTILE}\nplain=${HOSTILE}\nsingle=${HOSTILE}\n{{NONE}}\n`);
    });
});
