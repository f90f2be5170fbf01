import type { Server } from '@hapi/hapi';

import { templates } from './templates-service.ts';

/** The templates are read at start, so that a broken custom template stops start-up rather than a request. */
export default function setUpTemplates(server: Server): void {
    templates(server);
}
