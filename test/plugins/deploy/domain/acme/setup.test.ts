import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { RENEWAL_JOB } from '../../../../../plugins/deploy/domain/acme/renewal-events.ts';
import { createTestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('deploy manager: certificate renewal is scheduled', () => {
    it('schedules the daily renewal job when an ACME directory is configured', async () => {
        const context = await createTestServer({ ACME_DIRECTORY_URL: 'https://127.0.0.1:14000/dir' });
        try {
            const job = context.server.app.jobs.scheduled(RENEWAL_JOB);
            expect(job?.cron).to.match(/^\d{1,2} 3 \* \* \*$/);
        } finally {
            await context.cleanup();
        }
    });

    it('schedules nothing without one', async () => {
        const context = await createTestServer();
        try {
            expect(context.server.app.jobs.scheduled(RENEWAL_JOB)).to.not.exist();
        } finally {
            await context.cleanup();
        }
    });
});
