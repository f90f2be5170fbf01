import type { Server } from '@hapi/hapi';

import { setUpWebhooks } from '../../webhooks/setup.ts';

/** System and default webhooks: repository events are heard, and the delivery worker is scheduled. */
export default async function setUp(server: Server): Promise<void> {
    await setUpWebhooks(server);
}
