// For fragments that start the app: `AppModule` stands for the app's root module.
declare class AppModule {}

// <snippet>
