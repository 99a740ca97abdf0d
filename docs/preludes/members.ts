// Class members (a decorated method, or several): the fragment goes inside a provider that has
// the services the fragments use injected as `this.notes`, `this.orders` and `this.registry`.
@Injectable()
export class SnippetProvider {
  constructor(
    private readonly notes: NotesService,
    private readonly orders: OrdersService,
    private readonly registry: McpRegistry,
  ) {}

  // <snippet>
}
