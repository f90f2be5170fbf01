import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('deploy manager: health and error shape', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
    });

    after(async () => {
        await context.cleanup();
    });

    it('answers GET /api/health with status ok, registered from the YAML spec', async () => {
        const response = await context.server.inject('/api/health');
        expect(response.statusCode).to.equal(200);
        expect(response.result).to.equal({ status: 'ok' });
        expect(context.server.lookup('health.getHealth')?.path).to.equal('/api/health');
    });

    it('answers unknown paths under /api with {error}', async () => {
        const response = await context.server.inject('/api/no-such-thing');
        expect(response.statusCode).to.equal(404);
        expect(response.result).to.equal({ error: 'not found' });
    });

    it('answers a wrong method with 405 and {error}', async () => {
        const response = await context.server.inject({ method: 'POST', url: '/api/health' });
        expect(response.statusCode).to.equal(405);
        expect(response.result).to.equal({ error: 'method POST not allowed' });
    });
});

describe('deploy manager: only the git service', () => {
    it('still answers /api/health when SERVICES=git', async () => {
        const context = await createTestServer({ SERVICES: 'git' });
        try {
            const response = await context.server.inject('/api/health');
            expect(response.result).to.equal({ status: 'ok' });
        } finally {
            await context.cleanup();
        }
    });

    it('has no git routes when SERVICES=deploy', async () => {
        const context = await createTestServer({ SERVICES: 'deploy' });
        try {
            const response = await context.server.inject('/api/v1/licenses');
            expect(response.statusCode).to.equal(404);
        } finally {
            await context.cleanup();
        }
    });
});
