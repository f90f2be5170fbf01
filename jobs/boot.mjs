// Every Bree worker starts here: worker threads do not inherit tsx, so it is registered before the
// TypeScript job named in workerData.script is imported.
import { workerData } from 'node:worker_threads';

import { register } from 'tsx/esm/api';

register();
await import(workerData.script);
