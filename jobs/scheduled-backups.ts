/** The backup schedules' tick: the server backs up the apps whose time came (plugins/deploy/domain/backups/backup-schedules.ts). */
import { done, post } from '../lib/worker.ts';

post({ due: true });
done();
