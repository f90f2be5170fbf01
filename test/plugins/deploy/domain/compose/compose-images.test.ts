// needs: docker
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose, validateCompose } from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { docker } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('deploy manager: compose images are checked against the engine and the registry', { timeout: 300_000 }, () => {
    let services: RunningServices;
    let pushed: string;
    let missing: string;

    before(async () => {
        services = await startServices();
        const registry = services.exports.REGISTRY_URL;
        // A tiny image built here (no registry on the Internet is reachable), pushed to the local registry,
        // then removed from the engine, so that only the registry knows it.
        const context = temporaryDirectory('gatehouse-image-');
        Fs.writeFileSync(Path.join(context, 'hello.txt'), 'hello\n');
        Fs.writeFileSync(Path.join(context, 'Dockerfile'), 'FROM scratch\nCOPY hello.txt /hello.txt\n');
        pushed = `${registry}/gatehouse-test/tiny:1`;
        missing = `${registry}/gatehouse-test/never-pushed:1`;
        docker('build', '-q', '-t', pushed, context);
        docker('push', '-q', pushed);
        docker('rmi', pushed);
        Fs.rmSync(context, { recursive: true, force: true });
    });

    after(() => {
        services?.stop();
    });

    const imageErrors = async (image: string) =>
        (await validateCompose(parseCompose(`services:\n  app:\n    image: ${image}\n`), { checkHostPorts: false })).filter(
            (finding) => finding.path === 'services.app.image',
        );

    it('accepts an image its registry has, though the engine does not', async () => {
        expect(await imageErrors(pushed)).to.equal([]);
    });

    it('reports an image its registry does not have, naming the service field', async () => {
        const findings = await imageErrors(missing);
        expect(findings.length).to.equal(1);
        expect(findings[0]).to.include({ level: 'error' });
        expect(findings[0]?.message).to.contain('does not resolve');
    });
});
