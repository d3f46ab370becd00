import { MemoryStorage } from './memory.js';
import { storageConformance } from '../testing/conformance.js';

storageConformance('memory', async () => new MemoryStorage());
