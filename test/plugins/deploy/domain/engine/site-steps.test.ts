import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { maintenanceSite } from '../../../../../plugins/deploy/domain/engine/site-steps.ts';
import { defaultSite, renderSite } from '../../../../../plugins/deploy/domain/nginx/site-model.ts';
import { readConf } from '../../../../../plugins/deploy/domain/nginx/syntax.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('deploy runs: the maintenance page visitors see while an app is replaced', () => {
    const site = renderSite(defaultSite({ domain: 'notes.apps.test', upstreamPort: 38_100 }));

    it('answers 503 with a Retry-After at the top of every server block, before any location, the rest unchanged', () => {
        const held = maintenanceSite(site);
        const servers = readConf(held).directives.filter((directive) => directive.name === 'server');
        expect(servers).to.have.length(2);
        for (const server of servers) {
            const names = (server.block ?? []).map((directive) => directive.name);
            expect(names.slice(0, 3)).to.equal(['default_type', 'add_header', 'return']);
            expect(names.indexOf('return')).to.be.below(names.indexOf('location'));
            const answer = (server.block ?? []).find((directive) => directive.name === 'return');
            expect(answer?.args[0]?.value).to.equal('503');
        }

        const removed = held
            .split('\n')
            .filter(
                (line) =>
                    !/^\s+(# Gatehouse: the app is being updated|default_type text\/html;|add_header Retry-After 15 always;|return 503 )/.test(
                        line,
                    ),
            );
        expect(removed.join('\n')).to.equal(site);
    });

    it('leaves a text without a server block as it is', () => {
        expect(maintenanceSite('# nothing here\n')).to.equal('# nothing here\n');
    });
});
