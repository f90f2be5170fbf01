// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { buildTestImage, removeProjects } from '../../../../support/images.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const WITH_CHECK = `gatehouse-test/lint-health-yes:${SUFFIX}`;
const WITHOUT_CHECK = `gatehouse-test/lint-health-no:${SUFFIX}`;

describe("deploy manager: lint knows an image's own health check", { timeout: 300_000 }, () => {
    let server: DeployTestServer;

    before({ timeout: 300_000 }, async () => {
        buildTestImage(WITH_CHECK, { lines: ['HEALTHCHECK --interval=5s CMD true', 'CMD ["sleep", "3600"]'] });
        buildTestImage(WITHOUT_CHECK, { lines: ['CMD ["sleep", "3600"]'] });
        server = await deployTestServer();
    });

    after(async () => {
        await removeProjects([], [WITH_CHECK, WITHOUT_CHECK]);
        await server?.context.cleanup();
    });

    const compose = (image: string) => ['services:', '  web:', `    image: ${image}`, '    restart: unless-stopped'].join('\n');

    const healthcheckFindings = async (text: string) => {
        const response = await server.admin.post('/api/compose/validate', { text });
        expect(response.status, response.text).to.equal(200);
        return (response.body as { lint: Finding[] }).lint.filter((finding) => finding.path === 'services.web.healthcheck');
    };

    it('says nothing of a missing healthcheck when the image declares one, and still does when it does not', async () => {
        expect(await healthcheckFindings(compose(WITH_CHECK))).to.equal([]);
        const [finding] = await healthcheckFindings(compose(WITHOUT_CHECK));
        expect(finding?.message).to.contain('declares no healthcheck');
    });

    it("leaves the finding out of an app's preview when its image declares a health check", async () => {
        const name = `lint-health-${SUFFIX}`;
        const [repository = '', tag = ''] = WITH_CHECK.split(':');
        const created = await server.admin.post('/api/apps', { name, image: repository, tag });
        expect(created.status, created.text).to.equal(201);
        const preview = await server.admin.post(`/api/apps/${name}/preview`, {});
        expect(preview.status, preview.text).to.equal(200);
        const paths = (preview.body as { lint: Finding[] }).lint.map((finding) => finding.path);
        expect(paths).to.not.include('services.app.healthcheck');
        expect(paths).to.include('services.app.volumes');
    });
});
