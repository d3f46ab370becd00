import { MemoryStorage } from '../../storage/memory/memory.js';
import { createRegistry } from '../index.js';
import { testKinds } from './kind-tester.js';

const storage = () => new MemoryStorage();
testKinds(createRegistry(storage()).definitions(), { storage, registry: (s) => createRegistry(s) });
