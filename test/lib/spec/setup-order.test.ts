import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { setUpDomain } from '../../../lib/spec/handlers.ts';
import { DEPLOY_SETUP_ORDER } from '../../../plugins/deploy/index.ts';
import { GIT_SETUP_ORDER } from '../../../plugins/git/index.ts';
import { ROOT_DIR } from '../../../server.ts';
import { temporaryDirectory } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** A domain folder whose concepts' setup.ts each append their name to server.app's list, to see the order run. */
function domainWith(concepts: string[]): string {
    const root = temporaryDirectory('gatehouse-setup-order-');
    for (const concept of concepts) {
        Fs.mkdirSync(Path.join(root, concept), { recursive: true });
        Fs.writeFileSync(
            Path.join(root, concept, 'setup.ts'),
            `export default (server: { app: { order?: string[] } }) => { (server.app.order ??= []).push('${concept}'); };\n`,
        );
    }

    return root;
}

describe('the services set up their concepts in the order their plugin states', () => {
    it('runs each setup.ts in the stated order, whatever the names', async () => {
        const server = Hapi.server();
        await setUpDomain(domainWith(['alpha', 'beta', 'gamma']), server, ['gamma', 'alpha', 'beta']);
        expect((server.app as { order?: string[] }).order).to.equal(['gamma', 'alpha', 'beta']);
    });

    it('stops the start on a setup.ts the order leaves out, or an order naming a concept without one', async () => {
        const root = domainWith(['alpha', 'beta']);
        await expect(setUpDomain(root, Hapi.server(), ['alpha'])).to.reject(Error, /beta\/setup\.ts not in the setup order/);
        await expect(setUpDomain(root, Hapi.server(), ['alpha', 'beta', 'delta'])).to.reject(
            Error,
            /the setup order names delta, which has no setup\.ts/,
        );
    });

    it("states every setup.ts of git's and deploy's domains", () => {
        const withSetup = (domain: string) =>
            Fs.readdirSync(domain)
                .filter((concept) => Fs.existsSync(Path.join(domain, concept, 'setup.ts')))
                .sort();
        const stated = (order: readonly string[]) => [...order].sort();
        expect(stated(GIT_SETUP_ORDER)).to.equal(withSetup(Path.join(ROOT_DIR, 'plugins', 'git', 'domain')));
        expect(stated(DEPLOY_SETUP_ORDER)).to.equal(withSetup(Path.join(ROOT_DIR, 'plugins', 'deploy', 'domain')));
    });
});
