package catalog

var hddDrives = []Drive{}
