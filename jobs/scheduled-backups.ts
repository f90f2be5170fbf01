/** BACKUP_SCHEDULE's tick: the server backs every deployed app up (plugins/deploy/domain/backups/setup.ts). */
import { done, post } from '../lib/worker.ts';

post({ due: true });
done();
